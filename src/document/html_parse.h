// Gumbo on untrusted HTML. Gumbo 0.10 has no limits of its own, and its cost is not linear in
// the input: it copies the stack of open elements into every parse error it records (memory
// quadratic in the unclosed elements), it reopens every formatting element (<b>, <font>, ...)
// left open whenever text follows a closed block (3,000 distinct <b x=i> then <p>x</p>
// repeated: 15 million element clones), its scope checks walk the whole open-element stack
// (time quadratic in the nesting), and it never checks an allocation (NULL from malloc is dereferenced
// or asserted on: SIGSEGV or SIGABRT). So a page goes through three guards:
//
//   1. check_html_limits(): a linear pre-scan of the markup that models the tree builder's
//      stack of open elements and list of active formatting elements conservatively (it pops
//      only where Gumbo surely pops: matching end tags in scope, implied ends of p/li/dd/dt/
//      option/table parts, breakouts from SVG/MathML) and refuses, naming the limit, a page
//      over HtmlLimits' size, element, attribute, depth or open-formatting bounds. With those
//      bounds Gumbo's work is at most elements x (depth + formatting).
//   2. Parse errors are not recorded (max_errors 0: ordo never reads them), which removes
//      the quadratic stack copies.
//   3. GumboParse: every allocation of one parse comes from an arena with a memory budget (its
//      own, and one shared by all the parses of the process at once, so that concurrent
//      requests cannot add up: each arena counts what malloc really holds) and a deadline. The budget must never make the allocator return NULL (Gumbo would crash),
//      so an allocation beyond it, a failed malloc or a passed deadline longjmp()s back to
//      the parse call, whose arena then frees everything Gumbo had allocated; the caller gets
//      an ordo::Error naming the limit. This is safe because the frames the jump skips are
//      Gumbo's own C frames and the allocator's (no C++ object with a destructor lives in any
//      of them), Gumbo keeps no global or static state that a parse modifies and takes no
//      locks, and everything a parse owns is in its arena. The arena also frees the tree
//      without Gumbo's recursive gumbo_destroy_output (no stack depth limit on teardown).
// Only the pre-scan's limits are expected to trip on real input; the arena is the backstop for
// whatever the model of the tree builder does not foresee.
#pragma once

#include <gumbo.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "ordo/document.h"

namespace ordo::document {

// Throws ordo::Error "HTML input: ..." naming the first limit of `limits` that `html` exceeds.
void check_html_limits(const std::string& html, const HtmlLimits& limits);

// One Gumbo parse in its own arena (see above). Throws ordo::Error when the memory budget
// or the deadline runs out.
class GumboParse {
 public:
  GumboParse(const char* data, size_t size, size_t memory_budget, size_t process_budget,
             std::chrono::steady_clock::time_point deadline, double seconds_limit);
  ~GumboParse();
  GumboParse(const GumboParse&) = delete;
  GumboParse& operator=(const GumboParse&) = delete;

  const GumboOutput& output() const { return *output_; }

  struct Arena;

 private:
  Arena* arena_;
  GumboOutput* output_ = nullptr;
};

// The memory budget of a parse of `size` bytes under `limits` (HtmlLimits::max_memory, or its
// default of 16 MiB + 128 bytes per input byte).
size_t html_memory_budget(size_t size, const HtmlLimits& limits);

}  // namespace ordo::document
