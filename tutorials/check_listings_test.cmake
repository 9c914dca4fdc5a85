# cmake -DCHECK=<check_listings> -DDIR=<scratch dir> -P check_listings_test.cmake
# The checker's own test, on a made-up chapter: a listing that is in the program, an exact block, a
# varies block, a block needing a tool ("needs: torch"), and then the same chapter with one stale line;
# then a small chapter with prose, and one copy of it per kind of drift the checker must catch.
# Each case says what check_listings must answer; the checker is what keeps every chapter honest, so
# it is checked the same way: by cases that must fail.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(WRITE ${DIR}/program.cpp "int main() {\n  return 0;\n}\n")
string(CONCAT chapter "A listing:\n\n```cpp\nint main() { return 0; }\n```\n\nAn exact block:\n\n```text\nloss 0.125\n```\n\n"
            "<!-- output: varies (ms) -->\n```text\ntook 17 ms\n```\n<sub>Measured on a test.</sub>\n\n"
            "<!-- output: varies (says) needs: torch -->\n```text\ntorch says 3\n```\n<sub>Measured on a test.</sub>\n")
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
expect("the torch block not excused" 1 "good.md:20: this ```text block is not in the output"
       ${DIR}/good.md ${DIR}/program.cpp ${prints})
expect("an exact block that drifted" 1 "stale.md:9: this ```text block is not in the output; --update would rewrite it"
       ${DIR}/stale.md ${DIR}/program.cpp ${prints} --missing torch)
expect("a torch run that prints the block" 0 "3 checked against the output, 0 stale"
       ${DIR}/good.md ${DIR}/program.cpp ${prints} --run "echo 'torch says 5'")

# --update-varies on two blocks with the same words: each takes its own occurrence, in order.
file(WRITE ${DIR}/twice.md "```cpp\nint main() { return 0; }\n```\n\n<!-- output: varies (ms) -->\n```text\nstep 9 ms\n```\n<sub>Measured on a test.</sub>\n\n"
                           "<!-- output: varies (ms) -->\n```text\nstep 9 ms\n```\n<sub>Measured on a test.</sub>\n")
file(WRITE ${DIR}/twice.cpp "int main() { return 0; }\n")
file(WRITE ${DIR}/twice.txt "step 48 ms\nstep 502 ms\n")
expect("two blocks with the same words, updated" 0 "2 rewritten" ${DIR}/twice.md ${DIR}/twice.cpp
       --run "cat ${DIR}/twice.txt" --update-varies)
file(READ ${DIR}/twice.md updated)
if(NOT updated MATCHES "step 48 ms.*step 502 ms")
  message(FATAL_ERROR "check_listings --update-varies gave the two blocks:\n${updated}")
endif()
message(STATUS "two blocks with the same words took the first and the second occurrence")

# A small chapter with prose: a number the commands print (0.125), one they set (20 steps), a
# declared constant (512), a path and a file:line of the project (here DIR is the project's root).
file(MAKE_DIRECTORY ${DIR}/tutorials ${DIR}/lib)
file(WRITE ${DIR}/lib/thing.h "// line 1\n// line 2\n// line 3\n// line 4\n// line 5\n")
file(WRITE ${DIR}/tutorials/small.cpp "int main() {\n  return 0;\n}\n")
string(CONCAT small "# 12. A small chapter\n\n"
                    "After 20 steps the loss is 0.125, and a step takes some milliseconds (the block below).\n"
                    "The program reads lib/thing.h, as lib/thing.h:3 says; chapters 1 to 11 come first.\n"
                    "The paper's width is 512. <!-- constants: 512 (the paper's) -->\n\n"
                    "```cpp\nint main() { return 0; }\n```\n\n```text\nloss 0.125\n```\n\n"
                    "<!-- output: varies (ms, eta) -->\n```text\nstep 20 took 17 ms, eta 0:42\n```\n<sub>Measured on a test.</sub>\n")
set(small_run --run "printf 'loss 0.125\\nstep 20 took 4 ms, eta 0:07\\n'")
file(WRITE ${DIR}/tutorials/small.md "${small}")
expect("a small chapter with prose, unchanged" 0 "2 checked against the output, 0 stale, 0 rewritten, 0 not checked.*0 failures"
       ${DIR}/tutorials/small.md ${DIR}/tutorials/small.cpp ${small_run})
expect("the same chapter, not run (--no-run): its prose alone" 0 "0 checked against the output.*0 failures"
       ${DIR}/tutorials/small.md ${DIR}/tutorials/small.cpp ${small_run} --no-run)

# plant(NAME OLD NEW "TEXT IN THE OUTPUT" [--no-run]): the small chapter with OLD replaced by NEW must fail
# with TEXT, which names the copy's file and line.
function(plant name old new text)
  string(REPLACE "${old}" "${new}" planted "${small}")
  if(planted STREQUAL small)
    message(FATAL_ERROR "check_listings, ${name}: '${old}' is not in the small chapter")
  endif()
  file(WRITE ${DIR}/tutorials/${name}.md "${planted}")
  expect("${name}" 1 "${text}" ${DIR}/tutorials/${name}.md ${DIR}/tutorials/small.cpp ${small_run} ${ARGN})
endfunction()
plant(varies-block-drifted "step 20 took" "step 21 took"
      "varies-block-drifted.md:17: the number 21 is printed as 20, and it is none of the quantities the tag lets vary")
plant(prose-not-printed "After 20 steps the loss is 0.125" "After 20 steps the loss is 0.25"
      "prose-not-printed.md:3: the number 0.25 in the prose is not printed in a checked block" --no-run)
plant(prose-quotes-varying "a step takes some milliseconds" "a step takes 17 ms"
      "prose-quotes-varying.md:3: prose quotes a number that varies from run to run: 17 \\(line 17\\)" --no-run)
plant(stale-constant "constants: 512 (" "constants: 512 4096 ("
      "stale-constant.md:5: the declared constant 4096 does not occur in the prose" --no-run)
plant(missing-path "reads lib/thing.h" "reads lib/gone.h" "missing-path.md:4: the path lib/gone.h does not exist" --no-run)
plant(line-past-the-end "lib/thing.h:3" "lib/thing.h:9"
      "line-past-the-end.md:4: lib/thing.h:9 is past the end of lib/thing.h \\(5 lines\\)" --no-run)
plant(forward-reference "chapters 1 to 11 come first" "chapters 1 to 11 and 13 come first"
      "forward-reference.md:4: chapter 13 comes later than this chapter \\(12\\), and the sentence does not say so" --no-run)
string(REPLACE "chapters 1 to 11 come first" "chapter 13 builds on it later" said_later "${small}")
file(WRITE ${DIR}/tutorials/said-later.md "${said_later}")
expect("a later chapter named in a sentence that says 'later'" 0 "0 failures"
       ${DIR}/tutorials/said-later.md ${DIR}/tutorials/small.cpp ${small_run} --no-run)
plant(machine-not-named "```\n<sub>Measured on a test.</sub>\n" "```\n"
      "machine-not-named.md:18: a varies block without the machine under it" --no-run)
file(READ ${DIR}/twice.md twice)
string(REGEX REPLACE "a test\\.</sub>\n$" "another machine.</sub>\n" two_machines "${twice}")
file(WRITE ${DIR}/two-machines.md "${two_machines}")
expect("two machines in one chapter" 1 "two-machines.md:15: measured on another machine, where line 9 was measured on a test"
       ${DIR}/two-machines.md ${DIR}/twice.cpp --no-run)
