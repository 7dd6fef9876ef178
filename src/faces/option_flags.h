// The command-line flags of a table of options (ordo/option_table.h), for `ordo translate`,
// `summarize`, `score` and `serve`: one CLI11 option per entry that has a flag, whose text the
// entry reads and checks (type, range) and stores. The command line spells no option, range or
// type of its own; a bad value is CLI11's one-line error with the table's words.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ordo/option_table.h"

namespace ordo::faces {

// Adds a flag to `cmd` for each entry of `specs` with one, except those named in `skip`; a
// flag given sets its option in `options` and adds its name to `given` (when not null), so
// that a caller can lay the flags over other layers (a preset's batching).
template <class Options>
void add_option_flags(CLI::App* cmd, const std::vector<OptionSpec<Options>>& specs, Options& options,
                      std::vector<std::string>* given = nullptr, const std::set<std::string>& skip = {}) {
  for (const OptionSpec<Options>& spec : specs) {
    if (!*spec.flag || skip.count(spec.name)) continue;
    const OptionSpec<Options>* entry = &spec;
    cmd->add_option_function<std::string>(
           spec.flag,
           [entry, &options, given](const std::string& text) {
             entry->set_text(options, text);
             if (given) given->push_back(entry->name);
           },
           spec.help)
        ->type_name(spec.metavar())
        ->check(CLI::Validator(
            [entry](std::string& text) {
              try {
                Options scratch;
                entry->set_text(scratch, text);
                return std::string();
              } catch (const OptionError& e) {
                return "'" + text + "' " + e.must;
              }
            },
            ""));
  }
}

// Copies the options named in `given` from `from` into `to`, as each entry reads and prints them.
template <class Options>
void copy_given(const std::vector<OptionSpec<Options>>& specs, const std::vector<std::string>& given,
                const Options& from, Options& to) {
  for (const OptionSpec<Options>& spec : specs)
    for (const std::string& name : given)
      if (name == spec.name) spec.set(to, spec.value(from));
}

}  // namespace ordo::faces
