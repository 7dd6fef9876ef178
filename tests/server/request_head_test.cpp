// The framing the connection thread reads before a request goes to a request thread
// (server/request_head.h): where a head and its body end, and each head refused with its status.
// ctest-label: unit
#include <gtest/gtest.h>

#include <string>

#include "server/request_head.h"

namespace {

using ordo::server::chunked_body_end;
using ordo::server::parse_request_head;

TEST(RequestHead, AWholeHeadGivesTheMethodPathAndBodyLength) {
  const std::string head = "POST /translate?x=1 HTTP/1.1\r\nHost: a\r\ncontent-length:  12 \r\n\r\n";
  const auto h = parse_request_head(head + "{\"q\": \"Hi\"}GET", 4096, 1024);
  EXPECT_EQ(h.status, 0) << h.error;
  EXPECT_EQ(h.method, "POST");
  EXPECT_EQ(h.path, "/translate");
  EXPECT_EQ(h.head_bytes, head.size());
  EXPECT_EQ(h.body_bytes, 12u);
  EXPECT_FALSE(h.chunked);
  EXPECT_EQ(h.expect_at, std::string::npos);
}

TEST(RequestHead, AHeadNotWholeYetDecidesNothing) {
  const auto h = parse_request_head("GET /health HTTP/1.1\r\nHost: a\r\n", 4096, 1024);
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.head_bytes, 0u);
}

TEST(RequestHead, Expect100ContinueIsFoundWhereItsNameStarts) {
  const std::string expect = "POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n";
  const auto h = parse_request_head(expect, 4096, 1024);
  ASSERT_NE(h.expect_at, std::string::npos);
  EXPECT_EQ(expect.compare(h.expect_at, 7, "Expect:"), 0);
}

TEST(RequestHead, RefusesAmbiguousOrOversizedFraming) {
  struct Case {
    std::string headers;
    int status;
    std::string error;
  };
  const Case cases[] = {
      {"Content-Length: 2\r\nContent-Length: 2\r\n", 400, "Bad Request: more than one Content-Length header"},
      {"Content-Length: 2\r\ncontent-length: 3\r\n", 400, "Bad Request: more than one Content-Length header"},
      {"Content-Length: 2,2\r\n", 400, "Bad Request: invalid Content-Length '2,2'"},
      {"Content-Length: -1\r\n", 400, "Bad Request: invalid Content-Length '-1'"},
      {"Content-Length: \r\n", 400, "Bad Request: invalid Content-Length ''"},
      {"Content-Length: 99999999999999999999\r\n", 400, "Bad Request: invalid Content-Length '99999999999999999999'"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", 400,
       "Bad Request: both Transfer-Encoding and Content-Length"},
      {"Transfer-Encoding: gzip, chunked\r\n", 501,
       "Not Implemented: Transfer-Encoding 'gzip, chunked' (only chunked)"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400,
       "Bad Request: more than one Transfer-Encoding header"},
      {"Content-Length: 1025\r\n", 413, "Request body larger than 1024 bytes"},
  };
  for (const Case& c : cases) {
    const auto h = parse_request_head("POST /translate HTTP/1.1\r\n" + c.headers + "\r\n", 4096, 1024);
    EXPECT_EQ(h.status, c.status) << c.headers;
    EXPECT_EQ(h.error, c.error) << c.headers;
  }
  EXPECT_EQ(parse_request_head("GARBAGE\r\n\r\n", 4096, 1024).status, 400);
  EXPECT_EQ(parse_request_head("GET /" + std::string(5000, 'a') + " HTTP/1.1\r\n\r\n", 4096, 1024).status, 431);
  EXPECT_EQ(parse_request_head("GET /" + std::string(5000, 'a'), 4096, 1024).status,
            431);  // not whole, already too long
  // A value shown in a message is cut and its control characters escaped.
  const auto h =
      parse_request_head("POST / HTTP/1.1\r\nContent-Length: 1\x01" + std::string(100, '2') + "\r\n\r\n", 4096, 1024);
  EXPECT_EQ(h.error, "Bad Request: invalid Content-Length '1\\u0001" + std::string(62, '2') + "...'");
}

TEST(RequestHead, ChunkedBodies) {
  const std::string body = "4\r\nWiki\r\n5;name=value\r\npedia\r\n0\r\nTrailer: x\r\n\r\n";
  EXPECT_EQ(chunked_body_end(body + "GET /", 0, 1024).end, body.size());
  EXPECT_EQ(chunked_body_end("4\r\nWiki\r\n0\r\n\r\n", 0, 1024).end, 14u);
  // Not whole yet, at every cut.
  for (size_t cut = 0; cut < body.size(); ++cut) {
    const auto partial = chunked_body_end(body.substr(0, cut), 0, 1024);
    EXPECT_EQ(partial.end, 0u) << cut;
    EXPECT_EQ(partial.status, 0) << cut;
  }
  EXPECT_EQ(chunked_body_end("4\r\nWikiXX", 0, 1024).status, 400);  // no CRLF after the data
  EXPECT_EQ(chunked_body_end("zz\r\n", 0, 1024).status, 400);       // not hex
  EXPECT_EQ(chunked_body_end("401\r\n", 0, 1024).status, 413);      // 1025 bytes of data
  EXPECT_EQ(chunked_body_end("ffffffffffffffffff\r\n", 0, 1024).status, 413);
  EXPECT_EQ(chunked_body_end("200\r\n" + std::string(512, 'a') + "\r\n201\r\n", 0, 1024).status, 413);  // in all
  EXPECT_EQ(chunked_body_end(std::string(2000, '1'), 0, 1024).status, 400);  // a size line without end
}

}  // namespace
