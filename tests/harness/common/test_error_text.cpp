// One-line error reasons: summarize_error_text keeps the first line of a message and, when c10
// says where it raised it, that place, and drops the C++ backtrace below. The text shapes here
// are c10's (the real c10::Error is checked in test_runner).
#include "tipbench/common/error_text.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using tipbench::summarize_error_text;

TEST(ErrorText, PlainOneLineMessagesAreKept) {
  EXPECT_EQ(summarize_error_text("cannot open x.json"), "cannot open x.json");
  EXPECT_EQ(summarize_error_text(""), "");
  EXPECT_EQ(tipbench::error_summary(std::runtime_error("boom")), "boom");
}

TEST(ErrorText, ACheckFailureKeepsItsMessageAndWhereItWasRaised) {
  const std::string what =
      "Expected all tensors to be on the same device\n"
      "Exception raised from check_device at /pytorch/aten/src/ATen/X.cpp:42 (most recent call first):\n"
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f in libc10.so)\n"
      "frame #1: <unknown function> + 0x6a90931 (0x7f in libtorch_cpu.so)\n";
  EXPECT_EQ(summarize_error_text(what),
            "Expected all tensors to be on the same device (raised from check_device at X.cpp:42)");
}

// Text a file chose stays on the message's one line.
TEST(ErrorText, OneLineEscapesControlCharacters) {
  EXPECT_EQ(tipbench::one_line("it calls at\n::dropout\x1b[2J\t"), "it calls at\\n::dropout\\x1b[2J\\t");
  EXPECT_EQ(tipbench::one_line("plain / path"), "plain / path");
}

// The folders of the machine LibTorch was built on never reach the user; a path the user gave does.
TEST(ErrorText, LibTorchsBuildFoldersAreLeftOut) {
  const std::string what =
      "PytorchStreamReader failed reading zip archive: failed finding central directory (raised from valid at "
      "/pytorch/caffe2/serialize/inline_container.cc:242)\n";
  EXPECT_EQ(summarize_error_text(what),
            "PytorchStreamReader failed reading zip archive: failed finding central directory (raised from valid at "
            "inline_container.cc:242)");
  EXPECT_EQ(summarize_error_text("/home/me/models/net.pt: cannot be read"), "/home/me/models/net.pt: cannot be read");
}

TEST(ErrorText, AnEnforceFailureAlreadyNamesItsPlaceOnTheFirstLine) {
  const std::string what =
      "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to "
      "allocate 12288000000 bytes. Error code 12 (Cannot allocate memory)\n"
      "frame #0: c10::ThrowEnforceNotMet(char const*, int, char const*, std::string const&, void const*) + 0x6a\n"
      "frame #1: c10::alloc_cpu(unsigned long) + 0x365\n";
  const auto summary = summarize_error_text(what);
  EXPECT_EQ(summary.find('\n'), std::string::npos);
  EXPECT_EQ(summary.find("frame #"), std::string::npos);
  EXPECT_NE(summary.find("alloc_cpu.cpp:127"), std::string::npos);
  EXPECT_NE(summary.find("12288000000 bytes"), std::string::npos);
}

// TorchScript's errors start with a newline; the summary is their first line with text.
TEST(ErrorText, LeadingBlankLinesAreSkipped) {
  EXPECT_EQ(summarize_error_text("\nUnknown builtin op: ns::op.\nCould not find any similar ops"),
            "Unknown builtin op: ns::op.");
  EXPECT_EQ(summarize_error_text("\n \n"), "");
}

TEST(ErrorText, TrailingSpaceAndCarriageReturnsAreTrimmed) {
  EXPECT_EQ(summarize_error_text("broken pipe \r\nmore"), "broken pipe");
}

}  // namespace
