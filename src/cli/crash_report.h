// What `ordo` prints when it dies of a signal it cannot survive (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGABRT): one line naming the signal and the faulting address, then the stack of the
// thread that took it (glibc's backtrace(), a library and offset per frame: `addr2line -f -e
// <library> <offset>` names the source line), then the signal's default action (the same exit
// status and core file as without the handler).
//
// Why: a crash used to end `ordo` (and `ordo serve`, the same process) with nothing but status
// 139. A crash is always a bug in ordo, and on a machine that is gone by the time anyone looks
// (a CI run, a container) the stack on stderr is all there is to go on.
//
// Only what is async-signal-safe runs in the handler: write(2), backtrace_symbols_fd() (whose
// library is loaded at install time: the first backtrace() call loads libgcc_s, which may
// allocate) and raise(). It runs on an alternate stack so that a stack overflow of the main
// thread is reported too. Installed by the launcher only: the sanitizer builds (no launcher)
// keep the sanitizers' own reports.
#pragma once

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace ordo::cli {

namespace crash_detail {

inline void put(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// `value` in base 10 or 16, digits only (printf is not async-signal-safe).
inline void put_number(uintptr_t value, unsigned base) {
  char digits[21];
  int at = static_cast<int>(sizeof(digits)) - 1;
  digits[at] = '\0';
  do {
    digits[--at] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0 && at > 0);
  put(digits + at);
}

inline const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error: a mapped file shrank, or a misaligned access)";
    case SIGILL: return "SIGILL (an instruction this CPU does not have)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGABRT: return "SIGABRT (abort)";
    default: return "a fatal signal";
  }
}

inline void handle(int signal, siginfo_t* info, void*) {
  put("ordo: fatal: ");
  put(signal_name(signal));
  if (info && info->si_code <= 0) {  // kill(), raise(), abort(): no faulting address
    put(" sent by process ");
    put_number(static_cast<uintptr_t>(info->si_pid), 10);
  } else if (info) {
    put(" at address 0x");
    put_number(reinterpret_cast<uintptr_t>(info->si_addr), 16);
    put(", a bug in ordo: please report it with what follows");
  }
  put(". The stack of the thread that took it:\n");
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  // SA_RESETHAND restored the default action: the same status (and core file) as without
  // this handler, once the handler returns.
  ::raise(signal);
}

}  // namespace crash_detail

// Installs the handler for the fatal signals (once, at the start of main()).
inline void install_crash_report() {
  void* warm[2];
  ::backtrace(warm, 2);  // loads libgcc_s now, not inside the handler
  static char alternate[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate;
  stack.ss_size = sizeof(alternate);
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = crash_detail::handle;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(signal, &action, nullptr);
}

}  // namespace ordo::cli
