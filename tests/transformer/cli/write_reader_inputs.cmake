# cmake -DDIR=<folder> -DBYTES=<n> -P write_reader_inputs.cmake
# Writes the inputs the readers' tests (readers.cmake) give the program, which a command line cannot
# carry: a good first line, then one of BYTES bytes with no newline after it (an endless line, as a
# file with no line ends or /dev/zero gives), as sentences (long-line.txt), as pairs (long-line.tsv)
# and as a vocabulary (long-line.vocab); and latin1.txt, whose first line has a Latin-1 "é" (0xE9,
# not UTF-8), its second one the tiny model's tokens.
if(NOT DIR OR NOT BYTES)
  message(FATAL_ERROR "usage: cmake -DDIR=<folder> -DBYTES=<n> -P write_reader_inputs.cmake")
endif()
string(REPEAT "x" ${BYTES} endless)
file(WRITE "${DIR}/long-line.txt" "4 5\n${endless}")
file(WRITE "${DIR}/long-line.tsv" "4 5\t4 5\n${endless}")
file(WRITE "${DIR}/long-line.vocab" "<pad>\n<s>\n</s>\n<unk>\n${endless}")
string(ASCII 233 latin1_e_acute)
file(WRITE "${DIR}/latin1.txt" "caf${latin1_e_acute} .\n4 5\n")
# book.txt: 3 MB of lines of words, numbers, punctuation, runs of spaces and tabs: more than tokenize
# reads at once (1 MiB), so its pieces meet.
string(REPEAT "The cat's 12 dogs sat on the mat. it'll rain!\nA  b\tc\n" 60000 book)
file(WRITE "${DIR}/book.txt" "${book}")
