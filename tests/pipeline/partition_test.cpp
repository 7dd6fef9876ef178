// The one split-and-rejoin of a call's inputs (pipeline/partition.h): groups in the order of
// their first input, parts' results back at their inputs, inputs in no part filled, streamed
// events numbered as the call's inputs.
// ctest-label: unit
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/partition.h"

namespace ordo::pipeline {
namespace {

TEST(Partition, GroupsFollowTheOrderOfTheirFirstInput) {
  const std::vector<int> keys = {3, 1, 3, 2, 1};
  const std::vector<Part> parts = group_by(keys.size(), [&](size_t i) { return keys[i]; });
  EXPECT_EQ(parts, (std::vector<Part>{{0, 2}, {1, 4}, {3}}));
}

TEST(Partition, GatherTakesThePartsElementsInItsOrder) {
  EXPECT_EQ(gather(std::vector<std::string>{"a", "b", "c"}, Part{2, 0}), (std::vector<std::string>{"c", "a"}));
}

TEST(Partition, GatherOfAnEmptyListIsEmpty) { EXPECT_TRUE(gather(std::vector<int>{}, Part{0, 1}).empty()); }

// Five inputs, parts {3, 1} and {4}: each part's results are "r<input>"; the parts' numbers
// are written to `numbers_seen`.
std::vector<std::string> run_two_parts(std::vector<size_t>* numbers_seen) {
  const std::vector<Part> parts = {{3, 1}, {4}};
  return run_parts<std::string>(
      5, parts, DecodeOptions(),
      [&](size_t p, const Part& part, const DecodeOptions&) {
        numbers_seen->push_back(p);
        std::vector<std::string> out;
        for (size_t i : part) out.push_back("r" + std::to_string(i));
        return out;
      },
      "blank");
}

// The filler is what inputs of no part get.
TEST(Partition, EachPartsResultsLandAtItsInputsTheOthersGetTheFiller) {
  std::vector<size_t> numbers_seen;
  EXPECT_EQ(run_two_parts(&numbers_seen), (std::vector<std::string>{"blank", "r1", "blank", "r3", "r4"}));
}

TEST(Partition, EachPartRunsOnceWithItsNumberInOrder) {
  std::vector<size_t> numbers_seen;
  run_two_parts(&numbers_seen);
  EXPECT_EQ(numbers_seen, (std::vector<size_t>{0, 1}));
}

TEST(Partition, StreamedEventsOfAPartCarryTheCallsInputNumbers) {
  std::vector<size_t> inputs;
  DecodeOptions options;
  options.on_token = [&](const TokenEvent& e) {
    inputs.push_back(e.input);
    return true;
  };
  run_parts<int>(4, {{2, 0}, {3}}, options, [](size_t, const Part& part, const DecodeOptions& o) {
    for (size_t k = 0; k < part.size(); ++k) {
      TokenEvent e;
      e.input = k;  // the part's own numbering
      o.on_token(e);
    }
    return std::vector<int>(part.size());
  });
  EXPECT_EQ(inputs, (std::vector<size_t>{2, 0, 3}));
}

TEST(Partition, OnePartOfEveryInputInOrderRunsWithTheOptionsAsTheyAre) {
  DecodeOptions options;
  options.on_token = [](const TokenEvent&) { return true; };
  bool same = false;
  run_parts<int>(2, {{0, 1}}, options, [&](size_t, const Part& part, const DecodeOptions& o) {
    same = &o == &options;
    return std::vector<int>(part.size());
  });
  EXPECT_TRUE(same);
}

}  // namespace
}  // namespace ordo::pipeline
