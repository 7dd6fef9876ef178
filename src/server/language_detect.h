// Which language a text is in, for POST /detect and `source: "auto"` (libretranslate_routes.cpp),
// with CLD2 (Debian's libcld2: Google's Compact Language Detector 2, 80+ languages, its tables
// compiled into the library: no model files). A server concern, not the library's: ordo
// translates what it is told to; picking the source language is a serving policy.
//
// Only the languages the server translates from are answered: CLD2's codes are matched to the
// server's by canonical_language() (language_codes.h), the one table of language codes.
// Thread-safe: CLD2's detection calls keep their state on their own stack and read constant
// tables (compact_lang_det.h: "Thread safe"; the tables are compiled in, so no loadData* call
// is ever made). Its one global write (checked in Debian's libcld2 0.0.197 by disassembly):
// each call stores UNKNOWN_LANGUAGE into the "prior language" of its debug output, which only
// that output (flags ordo never sets) reads; the same constant from every thread. No lock, so
// a large request's detection does not hold up the others.
#pragma once

#include <string>
#include <vector>

namespace ordo::server {

struct DetectedLanguage {
  std::string language;   // the server's code for it: one of the candidates
  double confidence = 0;  // 0-100: the percentage of the text's letters CLD2 gives it
};

struct Detection {
  std::vector<DetectedLanguage> languages;  // best first (at most 3); empty: none of the candidates
  // CLD2 found its top language reliably. False for text too short for it, whose languages are
  // CLD2's best-effort guess, and for text in none of its languages.
  bool reliable = false;
  // CLD2's reliable top language when it is none of the candidates (its ISO 639-1 code, "fr"),
  // else "": the text is in a language the server does not translate from.
  std::string other;
};

// The languages of `text` among `candidates` (the server's codes: "de", "deu_Latn", ...).
// `text` must be valid UTF-8 (ordo::check_utf8): anything else detects nothing. Control
// characters and Unicode noncharacters, which CLD2 refuses, count as spaces. `html`: tags are
// skipped and entities read, as CLD2 does for HTML.
Detection detect_language(const std::string& text, const std::vector<std::string>& candidates, bool html = false);

}  // namespace ordo::server
