// The public text helpers forward to the internal text layer.
#include "ordo/text.h"

#include "text/tokenizer.h"

namespace ordo {

void check_utf8(const std::string& text, const std::string& where) { text::check_utf8(text, where); }

bool has_text(const std::string& text) { return text::has_text(text); }

}  // namespace ordo
