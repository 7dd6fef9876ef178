// The real `ordo serve` binary on 127.0.0.1 with an ephemeral port, for tests: started with
// its arguments, its port read from the line it prints, ready when GET /ready says so; every
// wait bounded. Also `ordo translate/summarize` runs for the answers a server must equal.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace ordo::testing {

inline std::string ordo_binary() { return std::string(ORDO_BINARY_DIR) + "/ordo"; }

class ServerProcess {
 public:
  // Starts `ordo serve --port 0 <args...>` and waits (at most `ready_seconds`) until it is ready.
  explicit ServerProcess(std::vector<std::string> args, double ready_seconds = 60) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    err_path_ = dir_.file("stderr");
    std::vector<std::string> argv = {ordo_binary(), "serve", "--host", "127.0.0.1", "--port", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) ::dup2(err, 2);
      ::close(out[0]);
      std::vector<char*> c_argv;
      for (std::string& a : argv) c_argv.push_back(a.data());
      c_argv.push_back(nullptr);
      ::execv(c_argv[0], c_argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    out_fd_ = out[0];
    // The lines it prints are the events waited on: its port once it listens, then "ready"
    // once its models are loaded (GET /ready says so from then on).
    const auto deadline = std::chrono::steady_clock::now() + seconds(ready_seconds);
    const std::string marker = "listening on http://127.0.0.1:";
    while (port_ == 0) {
      const std::string line = read_line(deadline, "printed no port");
      const size_t at = line.find(marker);
      if (at != std::string::npos) port_ = std::stoi(line.substr(at + marker.size()));
    }
    while (read_line(deadline, "was not ready").rfind("ordo serve: ready: ", 0) != 0) {
    }
    auto client = this->client();
    if (auto res = client->Get("/ready"); !res || res->status != 200)
      throw std::runtime_error("ordo serve said it was ready, GET /ready did not: " + stderr_text());
  }

  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  std::unique_ptr<httplib::Client> client(int timeout_seconds = 60) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(5);
    c->set_read_timeout(timeout_seconds);
    c->set_write_timeout(10);
    return c;
  }

  // SIGTERM (or `signal`), then the exit status (waits at most `seconds`; -1 if it did not exit).
  // The wait is on the process itself: a pidfd becomes readable when it exits.
  int stop(int signal = SIGTERM, double seconds = 30) {
    if (pid_ <= 0) return -1;
#ifdef SYS_pidfd_open
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
#else
    const int pidfd = -1;
#endif
    ::kill(pid_, signal);
    const auto deadline = std::chrono::steady_clock::now() + this->seconds(seconds);
    int status = 0;
    bool exited = false;
    while (!exited && std::chrono::steady_clock::now() < deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count())));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // no pidfd (kernel before 5.3)
      }
      exited = ::waitpid(pid_, &status, WNOHANG) == pid_;
    }
    if (pidfd >= 0) ::close(pidfd);
    if (!exited) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string stderr_text() const {
    std::ifstream in(err_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static std::chrono::steady_clock::duration seconds(double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
  }
  // The next line ordo serve prints; `waiting_for` names what it was awaited for in the
  // error when it does not come in time.
  std::string read_line(std::chrono::steady_clock::time_point deadline, const std::string& waiting_for) {
    std::string line;
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw std::runtime_error("ordo serve " + waiting_for + " in time: " + stderr_text());
      pollfd p{out_fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char c;
      const ssize_t n = ::read(out_fd_, &c, 1);
      if (n <= 0) throw std::runtime_error("ordo serve exited (" + waiting_for + "): " + stderr_text());
      if (c == '\n') return line;
      line += c;
    }
  }

  TempDir dir_;
  std::string err_path_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int port_ = 0;
};

// A raw TCP connection to 127.0.0.1:port, for what an HTTP client library does not send
// (pipelined requests, duplicate headers, a request trickled byte by byte). Every read bounded.
class RawSocket {
 public:
  // `source`: the local address to connect from ("": the system's choice, 127.0.0.1).
  explicit RawSocket(int port, const std::string& source = "") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && !source.empty()) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      if (::inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
        ::close(fd_);
        throw std::runtime_error("cannot bind a socket to " + source);
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // What arrives until the server closes the connection (or `seconds` pass: then `closed` is
  // false), or until it holds `or_text` when that is given.
  std::string read_until_closed(double seconds, bool* closed = nullptr, const std::string& or_text = "") {
    std::string out;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    if (closed) *closed = false;
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return out;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buffer, static_cast<size_t>(n));
      if (!or_text.empty() && out.find(or_text) != std::string::npos) return out;
    }
  }
  // One whole answer framed by Content-Length (head and body), or "" when the connection closes
  // or `seconds` pass before it is whole.
  std::string read_answer(double seconds) {
    std::string out;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (true) {
      const size_t head_end = out.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t length = 0;
        const std::string head = out.substr(0, head_end);
        for (const char* name : {"\r\nContent-Length: ", "\r\ncontent-length: "}) {
          const size_t h = head.find(name);
          if (h != std::string::npos) length = std::stoul(head.substr(h + std::strlen(name)));
        }
        if (out.size() >= head_end + 4 + length) return out;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return "";
      out.append(buffer, static_cast<size_t>(n));
    }
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// The HTTP answers in `bytes` (status line and body of each, framed by Content-Length).
struct RawAnswer {
  int status = 0;
  std::string body;
};
inline std::vector<RawAnswer> split_answers(const std::string& bytes) {
  std::vector<RawAnswer> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t head_end = bytes.find("\r\n\r\n", at);
    if (head_end == std::string::npos || bytes.compare(at, 9, "HTTP/1.1 ") != 0) break;
    RawAnswer a;
    a.status = std::stoi(bytes.substr(at + 9, 3));
    size_t length = 0;
    const std::string head = bytes.substr(at, head_end - at);
    for (const char* name : {"\r\nContent-Length: ", "\r\ncontent-length: "}) {
      const size_t h = head.find(name);
      if (h != std::string::npos) length = std::stoul(head.substr(h + std::strlen(name)));
    }
    a.body = bytes.substr(head_end + 4, length);
    out.push_back(a);
    at = head_end + 4 + length;
  }
  return out;
}

// The value of one sample in a /metrics text, `sample` as printed before the value ("name" or
// "name{labels}"); NaN when it is not there.
inline double metric_value(const std::string& text, const std::string& sample) {
  const std::string key = sample + " ";
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, key.size(), key) == 0) return std::strtod(text.c_str() + at + key.size(), nullptr);
    at = end + 1;
  }
  return std::nan("");
}

// Waits on what a server counts instead of sleeping in the hope that it happened: GET /metrics
// every 20 ms until a sample says so, bounded. Its one keep-alive connection (made again when
// the server closed it) comes from another loopback address, 127.0.0.2, so that it counts
// against no per-address cap of the clients under test; it is one of ordo_http_connections.
class MetricsWatch {
 public:
  explicit MetricsWatch(int port, std::string source = "127.0.0.2") : port_(port), source_(std::move(source)) {}

  // The /metrics text ("" when there was no answer).
  std::string text() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        if (!socket_) socket_ = std::make_unique<RawSocket>(port_, source_);
      } catch (const std::exception&) {
        return "";
      }
      const std::string answer =
          socket_->send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n") ? socket_->read_answer(10) : "";
      const auto answers = split_answers(answer);
      if (answers.size() == 1 && answers[0].status == 200) return answers[0].body;
      socket_.reset();
    }
    return "";
  }

  // Until `done` holds for the sample's value (NaN while it is not there), at most `seconds`;
  // false then. `last`: the value last read.
  bool wait_until(const std::string& sample, const std::function<bool(double)>& done, double seconds,
                  double* last = nullptr) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (true) {
      const double value = metric_value(text(), sample);
      if (last) *last = value;
      if (done(value)) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  int port_;
  std::string source_;
  std::unique_ptr<RawSocket> socket_;
};

struct CommandRun {
  int exit_code;
  std::string out, err;
};

// Runs `ordo <args>` with `input` on stdin.
inline CommandRun run_ordo(const std::string& args, const std::string& input = "") {
  TempDir dir;
  const std::string in = dir.write("stdin", input);
  const std::string command =
      ordo_binary() + " " + args + " < '" + in + "' > '" + dir.file("stdout") + "' 2> '" + dir.file("stderr") + "'";
  const int status = std::system(command.c_str());
  const auto read = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(dir.file("stdout")), read(dir.file("stderr"))};
}

// `ordo translate|summarize ... --json` on `inputs` (one per line): one JSON object per input.
inline std::vector<nlohmann::json> cli_json(const std::string& args, const std::vector<std::string>& inputs) {
  std::string input;
  for (const std::string& s : inputs) input += s + "\n";
  const CommandRun run = run_ordo(args + " --json -q", input);
  if (run.exit_code != 0) throw std::runtime_error("ordo " + args + " failed: " + run.err);
  std::vector<nlohmann::json> out;
  std::stringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// One HTTP answer as the tests read it: status (0 when the request failed), the body as text
// and, when it parses, as JSON, and the headers.
struct Answer {
  int status = 0;
  nlohmann::json body;
  std::string text;
  httplib::Headers headers;
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

inline Answer answer_of(const httplib::Result& res) {
  Answer a;
  if (!res) return a;
  a.status = res->status;
  a.text = res->body;
  a.headers = res->headers;
  try {
    a.body = nlohmann::json::parse(res->body);
  } catch (...) {
  }
  return a;
}

}  // namespace ordo::testing
