// `ordo serve`'s lifecycle (server.h): the HTTP server on Connections, binding, the signals
// that drain it, loading the models. The routes are the Service's (service.h).
#include "server/server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include "server/connections.h"
#include "server/service.h"

namespace ordo::server {
namespace {

// httplib's Server with its connections handled by Connections: each accepted socket goes
// there (process_and_close_socket), and a request thread hands a whole request back to
// httplib's parsing and routing (process_request).
class HttpServer : public httplib::Server {
 public:
  void set_connections(Connections* connections) { connections_ = connections; }
  // Answers one request, its context registered for the handlers while they run
  // (request_context.h).
  bool serve(httplib::Stream& stream, const RequestContext& context, Service& service, bool close, bool& closed) {
    // The models of this request's start, and of every reload during it, live until it ends.
    const std::shared_ptr<const void> pin = service.pin_models();
    RequestContexts::Scope scope(service.contexts());
    return process_request(stream, close, closed, [&](httplib::Request& req) { scope.add(&req, &context); });
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    connections_->add(sock);
    return true;
  }
  Connections* connections_ = nullptr;
};

// httplib's accept loop runs its "tasks" here at once (each hands a socket to Connections);
// when the loop ends (stop()), the connections finish what they hold.
class HandOver : public httplib::TaskQueue {
 public:
  explicit HandOver(Connections& connections) : connections_(connections) {}
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override { connections_.stop(); }

 private:
  Connections& connections_;
};

}  // namespace

int run_server(const ServerConfig& config) {
  // SIGTERM/SIGINT (stop) and SIGHUP (reload) are taken by one thread (sigtimedwait), never by
  // a handler; every thread created from here on inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // Sockets for slow clients (ConnectionOptions::max_connections is kept below the limit).
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }

  Service service(config);
  HttpServer http;
  service.install(http);
  ConnectionOptions connection_options;
  connection_options.request_threads = std::max(1, config.http_threads);
  connection_options.read_seconds = config.limits.read_timeout_seconds;
  connection_options.per_address = config.limits.max_client_connections;
  connection_options.max_body_bytes = config.limits.max_body_bytes;
  connection_options.upload_paths = {"/translate_file", "/v2/document", "/v1/audio/transcriptions",
                                     "/v1/audio/translations"};
  // One body limit for the uploads: the larger of a file's and an audio upload's (its file,
  // fields and multipart framing); each route then holds its own part to its own limit.
  connection_options.max_upload_bytes = std::max(config.limits.max_file_bytes, audio_upload_bytes(config));
  connection_options.max_buffered_bytes =
      std::max<size_t>({size_t(16) << 20, 64 * config.limits.max_body_bytes, 2 * connection_options.max_upload_bytes});
  Connections connections(
      connection_options,
      [&http, &service](httplib::Stream& stream, const RequestContext& context, bool close, bool& closed) {
        return http.serve(stream, context, service, close, closed);
      },
      &service.metrics());
  http.set_connections(&connections);
  http.new_task_queue = [&connections] { return new HandOver(connections); };
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(std::max(config.limits.max_body_bytes, connection_options.max_upload_bytes));
  // Only SO_REUSEADDR: httplib's default also sets SO_REUSEPORT, which would let a second
  // server bind the same port and silently take half of the connections.
  int listen_fd = -1;
  http.set_socket_options([&listen_fd](socket_t fd) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = fd;
  });
  int port = config.port;
  if (port == 0) {
    port = http.bind_to_any_port(config.host);
  } else if (!http.bind_to_port(config.host, port)) {
    port = -1;
  }
  if (port <= 0)
    throw Error("cannot listen on " + config.host + ":" + std::to_string(config.port) + " (" + std::strerror(errno) +
                ")");
  // httplib listens with a backlog of 5; 64 clients connecting at once need more.
  if (listen_fd >= 0) ::listen(listen_fd, 1024);
  const std::string host = config.host.find(':') != std::string::npos ? "[" + config.host + "]" : config.host;
  std::cout << "ordo serve: listening on http://" << host << ":" << port << std::endl;

  std::atomic<bool> listening_done{false}, stop_requested{false};
  // Reloads run on a thread of their own: the signal thread only flags them (a SIGHUP during
  // a reload asks for one more), and stopping waits for a reload under way to end.
  std::mutex reload_mutex;
  std::condition_variable reload_wake;
  bool reload_requested = false, reload_stop = false;
  std::thread reloader([&] {
    std::unique_lock<std::mutex> lock(reload_mutex);
    while (!reload_stop) {
      reload_wake.wait_for(lock, std::chrono::milliseconds(200), [&] { return reload_requested || reload_stop; });
      const bool reload = reload_requested && !reload_stop;
      reload_requested = false;
      lock.unlock();
      if (reload) service.reload("SIGHUP");
      service.reap_unloaded();
      lock.lock();
    }
  });
  bool listen_ok = true;
  std::thread listener([&] {
    listen_ok = http.listen_after_bind();
    listening_done = true;
  });
  std::thread signal_waiter([&] {
    bool stopped = false;
    while (!listening_done) {
      timespec wait{0, 100 * 1000 * 1000};
      const int signal = sigtimedwait(&stop_signals, nullptr, &wait);
      if (signal == SIGHUP) {
        std::lock_guard<std::mutex> lock(reload_mutex);
        reload_requested = true;  // taken once the models are loaded and ready
        reload_wake.notify_all();
      }
      if (signal == SIGTERM || signal == SIGINT) {
        stderr_line(std::string("ordo serve: ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT") +
                    ": finishing the requests in flight");
        stop_requested = true;
      }
      if (stop_requested && !stopped && http.is_running()) {
        service.set_draining();
        http.stop();  // no new connections; the ones in flight are answered
        stopped = true;
      }
    }
  });
  const auto stop_reloader = [&] {
    {
      std::lock_guard<std::mutex> lock(reload_mutex);
      reload_stop = true;
    }
    reload_wake.notify_all();
    if (reloader.joinable()) reloader.join();
  };
  const auto stop_threads = [&] {
    stop_requested = true;
    listener.join();
    signal_waiter.join();
    stop_reloader();
    service.shutdown();
  };

  try {
    service.load_models();
  } catch (...) {
    stop_threads();
    throw;
  }
  if (!stop_requested) {
    service.set_ready(true);
    const std::shared_ptr<const void> pin = service.pin_models();  // a SIGHUP may reload meanwhile
    std::string names;
    for (const auto& m : service.models().models())
      names += (names.empty() ? "" : ", ") + m->name + " (" + task_name(m->task) + ")";
    std::cout << "ordo serve: ready: " << names << std::endl;
  }
  listener.join();
  signal_waiter.join();
  stop_reloader();
  service.shutdown();
  if (!listen_ok && !stop_requested) throw Error("the HTTP server stopped unexpectedly");
  stderr_line("ordo serve: stopped");
  return 0;
}

}  // namespace ordo::server
