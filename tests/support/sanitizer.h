// Whether this test binary (and so the ordo it starts, built in the same tree) runs on a
// sanitizer's allocator, which replaces glibc's: mallopt has no effect and freed memory stays
// in quarantine instead of going back to the system. Tests of those effects skip then.
// kTimeScale stretches a test's wall-clock bounds under a sanitizer, which runs ordo several
// times slower on CI's busy cores; a bound that tells stopped work from minutes of it still
// tells them apart three times over.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ORDO_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ORDO_SANITIZER_ALLOCATOR 1
#endif

namespace ordo::testing {
#ifdef ORDO_SANITIZER_ALLOCATOR
constexpr double kTimeScale = 3;
#else
constexpr double kTimeScale = 1;
#endif
}  // namespace ordo::testing
