#include "server/connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

namespace ordo::server {

using Clock = std::chrono::steady_clock;

namespace {

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// How long a refused connection is still read (and the bytes dropped) after its answer, so that
// closing it with unread input does not reset it before the client has read the answer.
constexpr double kLingerSeconds = 2;

// The address of a socket's peer (or its own address): "127.0.0.1", "::1".
void address_of(int fd, bool peer, std::string& address, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  address.clear();
  port = 0;
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    port = ntohs(in6->sin6_port);
  }
  address = text;
}

// Waits until `fd` is ready for `events` or `deadline` passes.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

}  // namespace

struct Connections::Connection {
  enum class State { kIdle, kReading, kBusy, kLingering };
  int fd = -1;
  uint64_t id = 0;
  std::string address, local_address;
  int port = 0, local_port = 0;
  std::string in;  // read and not yet answered; a request starts at in[0]
  State state = State::kIdle;
  // kIdle: since the last answer; kReading: the request's first byte; kLingering: the refusal.
  Clock::time_point since;
  bool eof = false;            // the client closed its side
  bool registered = false;     // in the epoll set
  bool continued = false;      // 100 Continue sent for the request being read
  Clock::time_point received;  // when the request handed over was whole
  // Of the request handed to a request thread (written before, read after the handover).
  RequestHead head;
  size_t request_end = 0;    // its length in `in`, head and body
  bool close_after = false;  // set by the request thread
};

namespace {

// A connection's request as httplib reads it: the buffered bytes of that request only (it is
// whole before a thread gets it; past its end reads see the end of the stream, so a request
// thread never waits for a client). Writes wait for the client at most `write_seconds` for the
// whole answer.
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(Connections::Connection& c, size_t end, double write_seconds)
      : c_(c), end_(std::min(end, c.in.size())), write_seconds_(write_seconds) {}

  bool is_readable() const override { return used_ < end_; }
  bool is_writable() const override { return wait_for(c_.fd, POLLOUT, write_deadline()); }

  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, end_ - used_);
    std::memcpy(ptr, c_.in.data() + used_, n);
    used_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(c_.fd, POLLOUT, write_deadline())) return -1;
    const ssize_t n = ::send(c_.fd, ptr, size, MSG_NOSIGNAL);
    if (n < 0) return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.address;
    port = c_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_address;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  Clock::time_point write_deadline() const {
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + seconds(write_seconds_);
    }
    return write_deadline_;
  }

  Connections::Connection& c_;
  const size_t end_;
  size_t used_ = 0;
  double write_seconds_;
  mutable bool writing_ = false;
  mutable Clock::time_point write_deadline_;
};

bool is_probe(const RequestHead& head) {
  return head.method == "GET" && (head.path == "/health" || head.path == "/ready" || head.path == "/metrics");
}

}  // namespace

bool RequestContext::client_gone() const {
  if (client_fd < 0) return false;
  pollfd p{client_fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

Connections::Connections(ConnectionOptions options, ServeFn serve, ConnectionObserver* observer)
    : options_(options), serve_(std::move(serve)), observer_(observer) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) throw std::runtime_error(std::string("epoll: ") + std::strerror(errno));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  loop_thread_ = std::thread([this] { loop(); });
  for (int i = 0; i < std::max(1, options_.request_threads); ++i) workers_.emplace_back([this] { work(false); });
  for (int i = 0; i < std::max(1, options_.probe_threads); ++i) workers_.emplace_back([this] { work(true); });
}

Connections::~Connections() {
  stop();
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

void Connections::wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void Connections::add(int fd) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      pending_.push_back(fd);
      fd = -1;
    }
  }
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  wake();
}

void Connections::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (threads_done_) return;
    stopping_ = true;
  }
  wake();
  if (loop_thread_.joinable()) loop_thread_.join();  // ends once every connection is closed
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_done_ = true;
  }
  work_ready_.notify_all();
  probe_ready_.notify_all();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
}

void Connections::loop() {
  epoll_event events[256];
  Clock::time_point last_sweep = Clock::now();
  while (true) {
    const int n = ::epoll_wait(epoll_fd_, events, 256, 50);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count;
        (void)!::read(wake_fd_, &count, sizeof(count));
        continue;
      }
      const auto it = connections_.find(events[i].data.fd);
      if (it != connections_.end()) readable(*it->second);
    }
    accept_pending();
    take_returned();
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping = stopping_;
    }
    if (stopping) {
      // No new requests: what is not being answered is closed; the loop ends with the last one.
      std::vector<Connection*> idle;
      for (auto& [fd, c] : connections_)
        if (c->state != Connection::State::kBusy) idle.push_back(c.get());
      for (Connection* c : idle) close(*c);
      if (connections_.empty()) return;
    }
    if (Clock::now() - last_sweep >= std::chrono::milliseconds(50)) {
      sweep();
      last_sweep = Clock::now();
    }
  }
}

void Connections::accept_pending() {
  std::vector<int> fds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fds.swap(pending_);
  }
  static const size_t fd_limit = [] {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return size_t(1) << 20;
    return static_cast<size_t>(limit.rlim_cur) > 256 ? static_cast<size_t>(limit.rlim_cur) - 128 : size_t(128);
  }();
  const size_t max_connections = std::max<size_t>(1, std::min(options_.max_connections, fd_limit));
  for (const int fd : fds) {
    const int flags = ::fcntl(fd, F_GETFL, 0);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->id = next_id_++;
    c->since = Clock::now();
    address_of(fd, true, c->address, c->port);
    address_of(fd, false, c->local_address, c->local_port);
    // At a cap: the oldest connection not being answered makes room, else the new one is refused.
    bool refuse = false;
    if (options_.per_address > 0 && per_address_[c->address] >= options_.per_address) refuse = !evict_for(c->address);
    if (!refuse && connections_.size() >= max_connections) refuse = !evict_for("");
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      ::close(fd);
      continue;
    }
    c->registered = true;
    Connection& added = *c;
    ++per_address_[added.address];
    connections_[fd] = std::move(c);
    if (refuse)
      reject(added, 503, "Service Unavailable: too many connections, each with a request being answered; retry later",
             "refused");
  }
}

bool Connections::evict_for(const std::string& address) {
  // Lingering refusals first, then idle keep-alive connections, then the request read longest.
  Connection* victim = nullptr;
  const auto rank = [](const Connection& c) {
    return c.state == Connection::State::kLingering ? 0 : c.state == Connection::State::kIdle ? 1 : 2;
  };
  for (auto& [fd, c] : connections_) {
    if (c->state == Connection::State::kBusy || (!address.empty() && c->address != address)) continue;
    if (!victim ||
        std::make_tuple(rank(*c), c->since, c->id) < std::make_tuple(rank(*victim), victim->since, victim->id))
      victim = c.get();
  }
  if (!victim) return false;
  if (observer_ && victim->state != Connection::State::kLingering) observer_->connection_dropped("evicted");
  close(*victim);
  return true;
}

void Connections::take_returned() {
  std::vector<Connection*> answered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    answered.swap(returned_);
  }
  for (Connection* c : answered) {
    c->state = Connection::State::kIdle;
    c->since = Clock::now();
    if (c->close_after) {
      close(*c);
      continue;
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = c->fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &event) != 0) {
      close(*c);
      continue;
    }
    c->registered = true;
    if (!c->in.empty()) {  // a pipelined request: its clock starts now
      c->state = Connection::State::kReading;
      reading_bytes_ += c->in.size();
    }
    advance(*c);
  }
}

void Connections::readable(Connection& c) {
  char buffer[65536];
  if (c.state == Connection::State::kLingering) {
    while (true) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      close(c);
      return;
    }
  }
  if (c.state != Connection::State::kIdle && c.state != Connection::State::kReading) return;
  // Room for one whole request and some of the next (pipelining); a request that does not fit
  // is refused by its head before the buffer is full.
  const int fd = c.fd;
  const size_t cap = buffer_cap();
  while (c.in.size() < cap) {
    const ssize_t n = ::recv(c.fd, buffer, std::min(sizeof(buffer), cap - c.in.size()), 0);
    if (n > 0) {
      if (c.in.empty() && c.state == Connection::State::kIdle) {
        c.state = Connection::State::kReading;
        c.since = Clock::now();
      }
      c.in.append(buffer, static_cast<size_t>(n));
      reading_bytes_ += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      c.eof = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    close(c);  // reset by the client
    return;
  }
  // Past the budget of requests unfinished or waiting for a thread: the one read longest is
  // refused (this one, maybe).
  while (reading_bytes_ + queued_bytes_ > options_.max_buffered_bytes) {
    Connection* oldest = nullptr;
    for (auto& [fd, other] : connections_)
      if (other->state == Connection::State::kReading && (!oldest || other->since < oldest->since))
        oldest = other.get();
    if (!oldest) break;
    reject(*oldest, 503, "Service Unavailable: the server holds too many unfinished requests; retry later", "budget");
  }
  const auto it = connections_.find(fd);  // c itself may have been refused, and closed
  if (it != connections_.end() &&
      (it->second->state == Connection::State::kIdle || it->second->state == Connection::State::kReading))
    advance(*it->second);
}

size_t Connections::largest_body() const { return std::max(options_.max_body_bytes, options_.max_upload_bytes); }

size_t Connections::body_limit(const std::string& target) const {
  const std::string path = target.substr(0, target.find('?'));
  for (const std::string& upload : options_.upload_paths)
    if (path == upload) return options_.max_upload_bytes;
  return options_.max_body_bytes;
}

size_t Connections::buffer_cap() const {
  // One whole request (chunked framing included) and the start of the next (pipelining).
  return options_.max_head_bytes + largest_body() + largest_body() / 4 + 65536;
}

void Connections::advance(Connection& c) {
  if (c.in.empty()) {
    c.state = Connection::State::kIdle;
    if (c.eof) close(c);
    return;
  }
  RequestHead head = parse_request_head(c.in, options_.max_head_bytes, largest_body());
  if (head.status != 0) return reject(c, head.status, head.error, "bad_request");
  size_t end = 0;  // of the request, once it is whole
  if (head.head_bytes > 0) {
    // A file upload's route takes the larger bodies; every other route its own limit.
    const size_t limit = body_limit(head.path);
    if (head.body_bytes > limit)
      return reject(c, 413, "Request body larger than " + std::to_string(limit) + " bytes", "bad_request");
    if (head.chunked) {
      const ChunkedBody body = chunked_body_end(c.in, head.head_bytes, limit);
      if (body.status != 0) return reject(c, body.status, body.error, "bad_request");
      end = body.end;
    } else if (c.in.size() >= head.head_bytes + head.body_bytes) {
      end = head.head_bytes + head.body_bytes;
    }
    // The client waits for 100 Continue before it sends the body: sent from here, and the
    // header renamed so that httplib does not send it again.
    if (head.expect_at != std::string::npos) {
      c.in[head.expect_at] = 'X';
      if (end == 0 && !c.continued) {
        static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        (void)::send(c.fd, kContinue, sizeof(kContinue) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        c.continued = true;
      }
    }
  }
  if (end == 0) {
    if (c.in.size() >= buffer_cap())  // chunked framing beyond any sensible overhead
      return reject(c, 413, "Request body larger than " + std::to_string(options_.max_body_bytes) + " bytes",
                    "bad_request");
    if (c.eof) close(c);  // it will never be whole
    return;
  }
  // Whole: to a request thread. The loop does not read this socket until it comes back.
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  c.registered = false;
  reading_bytes_ -= std::min(reading_bytes_, c.in.size());
  queued_bytes_ += c.in.size();
  c.state = Connection::State::kBusy;
  c.received = Clock::now();
  c.head = head;
  c.request_end = end;
  c.continued = false;
  c.close_after = false;
  const bool probe = is_probe(head);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (probe ? probes_ : requests_).push_back(&c);
  }
  (probe ? probe_ready_ : work_ready_).notify_one();
}

void Connections::reject(Connection& c, int status, const std::string& message, const char* reason) {
  if (observer_) observer_->connection_dropped(reason);
  const std::string body =
      nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
                             "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\nConnection: close\r\n\r\n" + body;
  (void)::send(c.fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);  // small: fits the socket buffer
  ::shutdown(c.fd, SHUT_WR);
  if (c.state == Connection::State::kReading) reading_bytes_ -= std::min(reading_bytes_, c.in.size());
  c.in.clear();
  c.in.shrink_to_fit();
  c.state = Connection::State::kLingering;
  c.since = Clock::now();
  if (c.eof) close(c);
}

void Connections::close(Connection& c) {
  if (c.registered) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  if (c.state == Connection::State::kReading) reading_bytes_ -= std::min(reading_bytes_, c.in.size());
  const auto count = per_address_.find(c.address);
  if (count != per_address_.end() && --count->second == 0) per_address_.erase(count);
  const int fd = c.fd;
  ::close(fd);
  connections_.erase(fd);  // c is gone
}

void Connections::sweep() {
  const Clock::time_point now = Clock::now();
  std::vector<Connection*> idle, late, done;
  for (auto& [fd, c] : connections_) {
    const auto age = now - c->since;
    if (c->state == Connection::State::kIdle && age > seconds(options_.idle_seconds)) idle.push_back(c.get());
    if (c->state == Connection::State::kReading && age > seconds(options_.read_seconds)) late.push_back(c.get());
    if (c->state == Connection::State::kLingering && age > seconds(kLingerSeconds)) done.push_back(c.get());
  }
  for (Connection* c : idle) close(*c);
  for (Connection* c : done) close(*c);
  std::ostringstream limit;
  limit << options_.read_seconds;
  for (Connection* c : late)
    reject(*c, 408, "Request Timeout: the request was not received whole within " + limit.str() + " s", "read_timeout");
  if (observer_) observer_->open_connections(connections_.size());
}

void Connections::work(bool probes) {
  std::deque<Connection*>& queue = probes ? probes_ : requests_;
  std::condition_variable& ready = probes ? probe_ready_ : work_ready_;
  while (true) {
    Connection* c = nullptr;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready.wait(lock, [&] { return !queue.empty() || threads_done_; });
      if (queue.empty()) return;
      c = queue.front();
      queue.pop_front();
      stopping = stopping_;
    }
    queued_bytes_ -= std::min(queued_bytes_.load(), c->in.size());
    ConnectionStream stream(*c, c->request_end, options_.write_seconds);
    bool closed = false, ok = false;
    RequestContext context;
    context.received = c->received;
    context.client_fd = c->fd;
    try {
      ok = serve_(stream, context, stopping, closed);
    } catch (...) {
      ok = false;
    }
    // A body the handler did not read is skipped.
    c->in.erase(0, std::min(c->request_end, c->in.size()));
    c->close_after = !ok || closed || stopping;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      returned_.push_back(c);
    }
    wake();
  }
}

}  // namespace ordo::server
