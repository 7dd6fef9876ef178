// The public API promises ordo::Error only. LibTorch reports with c10::Error (and a C++ stack
// trace), the allocator with std::bad_alloc, the standard library with its own exceptions:
// guarded() turns each into an ordo::Error saying what was being done, without LibTorch's
// trace. Every public entry point of the engine (Translator, SpeechRecognizer) runs in it.
#pragma once

#include <exception>
#include <new>
#include <string>

#include <c10/util/Exception.h>

#include "ordo/error.h"

namespace ordo::pipeline {

template <class F>
auto guarded(const std::string& doing, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("out of memory while " + doing);
  } catch (const c10::Error& e) {
    throw Error("internal error while " + doing + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error("internal error while " + doing + ": " + e.what());
  }
}

}  // namespace ordo::pipeline
