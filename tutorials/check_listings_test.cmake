# cmake -DCHECK=<check_listings> -DDIR=<scratch dir> -P check_listings_test.cmake
# The checker's own test, on a made-up chapter: a listing that is in the program, an exact block, a
# varies block, a block needing a tool ("needs: torch"), and then the same chapter with one stale line.
# Each case says what check_listings must answer; the checker is what keeps every chapter honest, so
# it is checked the same way: by cases that must fail.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(WRITE ${DIR}/program.cpp "int main() {\n  return 0;\n}\n")
string(CONCAT chapter "A listing:\n\n```cpp\nint main() { return 0; }\n```\n\nAn exact block:\n\n```text\nloss 0.125\n```\n\n"
            "<!-- output: varies (a timing; measured on a test) -->\n```text\ntook 17 ms\n```\n\n"
            "<!-- output: varies (a score; measured on a test) needs: torch -->\n```text\ntorch says 3\n```\n")
file(WRITE ${DIR}/good.md "${chapter}")
string(REPLACE "loss 0.125" "loss 0.25" stale "${chapter}")
file(WRITE ${DIR}/stale.md "${stale}")
set(prints --run "printf 'loss 0.125\\ntook 4 ms\\n'")

# expect(NAME EXIT_CODE "TEXT IN THE OUTPUT" check_listings arguments...)
function(expect name code text)
  execute_process(COMMAND ${CHECK} ${ARGN} WORKING_DIRECTORY ${DIR} RESULT_VARIABLE got OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT got EQUAL code OR NOT "${out}${err}" MATCHES "${text}")
    message(FATAL_ERROR "check_listings, ${name}: wanted exit ${code} and '${text}', got exit ${got}:\n${out}${err}")
  endif()
  message(STATUS "${name}: exit ${got}, as wanted")
endfunction()

expect("every block printed, the torch block excused" 0 "2 checked against the output, 0 stale, 0 rewritten, 1 not checked"
       ${DIR}/good.md ${DIR}/program.cpp ${prints} --missing torch)
expect("the torch block not excused" 1 "good.md:19: this ```text block is not in the output"
       ${DIR}/good.md ${DIR}/program.cpp ${prints})
expect("an exact block that drifted" 1 "stale.md:9: this ```text block is not in the output; --update would rewrite it"
       ${DIR}/stale.md ${DIR}/program.cpp ${prints} --missing torch)
expect("a torch run that prints the block" 0 "3 checked against the output, 0 stale"
       ${DIR}/good.md ${DIR}/program.cpp ${prints} --run "echo 'torch says 5'")

# --update-varies on two blocks with the same words: each takes its own occurrence, in order.
file(WRITE ${DIR}/twice.md "```cpp\nint main() { return 0; }\n```\n\n<!-- output: varies (a size; measured on a test) -->\n```text\nstep 9 ms\n```\n\n"
                           "<!-- output: varies (a size; measured on a test) -->\n```text\nstep 9 ms\n```\n")
file(WRITE ${DIR}/twice.cpp "int main() { return 0; }\n")
file(WRITE ${DIR}/twice.txt "step 48 ms\nstep 502 ms\n")
expect("two blocks with the same words, updated" 0 "2 rewritten" ${DIR}/twice.md ${DIR}/twice.cpp
       --run "cat ${DIR}/twice.txt" --update-varies)
file(READ ${DIR}/twice.md updated)
if(NOT updated MATCHES "step 48 ms.*step 502 ms")
  message(FATAL_ERROR "check_listings --update-varies gave the two blocks:\n${updated}")
endif()
message(STATUS "two blocks with the same words took the first and the second occurrence")
