// What check_listings.cpp and check_prose.cpp share: a chapter's lines, its ```text blocks and the
// numbers in a line. The rules themselves are in check_listings.cpp's first comment.
#pragma once
#include <regex>
#include <string>
#include <vector>

using Lines = std::vector<std::string>;

std::string trim(const std::string& s);
Lines read_lines(const std::string& path);

struct Block {
  size_t open = 0, close = 0;      // the lines of ```text and of the closing ```
  std::string tag;                 // "", "varies" or "not output"
  std::string needs;               // the optional tool whose command prints it ("" if none)
  std::vector<std::string> names;  // a varies block's quantities that may vary
};

// A number in a line of text: where it starts, where it ends, and its characters.
struct Number {
  size_t begin = 0, end = 0;
  std::string text;
};

// Every number in the line, as the output blocks see them: digits with '.', ':' or ',' between them
// and an exponent, after an optional '-' (so "4:38", "1,000", "-62.8902", "3.125e-04" are one each).
std::vector<Number> numbers_in(const std::string& line);

// For each number of line `row` of a varies block (numbers_in order): true if it may vary, by the
// tag's names: a unit after it, a label before it, or a column of the block's header above it.
std::vector<bool> varying_numbers(const Lines& block, size_t row, const std::vector<std::string>& names);

// The chapter's prose checks (check_prose.cpp): numbers and paths. `commands` are the chapter's
// commands (RUNS), `program` its program's lines; returns the number of failures, each reported.
int check_prose(const std::string& chapter_path, const Lines& md, const std::vector<Block>& blocks,
                const Lines& program, const Lines& commands);

// A mention of chapters by number: "chapter 11", "chapters 14-16", "chapters 1 to 13 and 16" (the
// prose check exempts its numbers; the order check finds the later ones among them).
const std::regex& chapter_mention();

// The order check (check_order.cpp): every mention of a later chapter sits in a sentence that says
// "later" (or opens the next chapter, "Next, ..."); returns the number of failures, each reported.
int check_forward_references(const std::string& chapter_path, const Lines& md);

// The machines check (check_machines.cpp): the first line after every varies block names the machine
// it was measured on, "<sub>Measured on MACHINE.</sub>", and a chapter names one machine only.
int check_machines(const std::string& chapter_path, const Lines& md, const std::vector<Block>& blocks);
