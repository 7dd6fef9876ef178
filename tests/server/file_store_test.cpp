// What `ordo serve` keeps between requests (server/file_store.h), without a server: files
// expire on an injected clock, the caps refuse with 429, the workers stop and drop queued jobs,
// DeepL glossary entries are read with every fault naming its line.
// ctest-label: unit
#include "server/file_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server/request_fields.h"

namespace {

using ordo::server::ApiError;
using ordo::server::FileStore;
using ordo::server::FileStoreLimits;
using ordo::server::GlossaryStore;
using ordo::server::JobRunner;
using ordo::server::StoredFile;
using ordo::server::StoredGlossary;

StoredFile file_of(const std::string& bytes, const std::string& status = "done") {
  StoredFile f;
  f.name = "a.txt";
  f.status = status;
  f.bytes = std::make_shared<const std::string>(bytes);
  return f;
}

struct FakeClock {
  FileStore::Clock::time_point now = FileStore::Clock::time_point() + std::chrono::hours(1);
  FileStore::Now fn() {
    return [this] { return now; };
  }
};

TEST(FileStore, AReadyFileIsFoundUntilItsTimeLimitAndNotAfter) {
  FakeClock clock;
  FileStore store(FileStoreLimits{10, 1 << 20, 8}, clock.fn());
  const std::string id = store.add(file_of("hello"));
  EXPECT_EQ(id.size(), 32u);
  clock.now += std::chrono::seconds(9);
  ASSERT_TRUE(store.find(id));
  EXPECT_EQ(*store.find(id)->bytes, "hello");
  clock.now += std::chrono::seconds(2);
  EXPECT_FALSE(store.find(id));
  EXPECT_EQ(store.bytes(), 0u);
}

TEST(FileStore, APendingJobsTimeLimitStartsWhenItIsDone) {
  FakeClock clock;
  FileStore store(FileStoreLimits{10, 1 << 20, 8}, clock.fn());
  const std::string id = store.add(file_of("upload", "queued"));
  clock.now += std::chrono::hours(5);
  ASSERT_TRUE(store.find(id));
  store.update(id, [](StoredFile& f) { f.status = "done"; });
  clock.now += std::chrono::seconds(9);
  EXPECT_TRUE(store.find(id));
  clock.now += std::chrono::seconds(2);
  EXPECT_FALSE(store.find(id));
}

TEST(FileStore, PastTheCapOfEntriesOrBytesAnAddIsA429) {
  FakeClock clock;
  FileStore store(FileStoreLimits{10, 100, 2}, clock.fn());
  store.add(file_of("one"));
  store.add(file_of("two"));
  try {
    store.add(file_of("three"));
    FAIL() << "a third entry was kept";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 429);
    EXPECT_GT(e.retry_after, 0);
  }
  FileStore small(FileStoreLimits{10, 100, 8}, clock.fn());
  EXPECT_THROW(small.add(file_of(std::string(200, 'x'))), ApiError);
  clock.now += std::chrono::seconds(11);  // the first two expired: room again
  EXPECT_NO_THROW(store.add(file_of("three")));
}

TEST(FileStore, AResultPastTheByteCapMakesTheJobAnError) {
  FakeClock clock;
  FileStore store(FileStoreLimits{10, 100, 8}, clock.fn());
  const std::string id = store.add(file_of("upload", "translating"));
  store.update(id, [](StoredFile& f) {
    f.status = "done";
    f.bytes = std::make_shared<const std::string>(std::string(500, 'x'));
  });
  EXPECT_EQ(store.find(id)->status, "error");
  EXPECT_NE(store.find(id)->error.find("100 bytes"), std::string::npos);
}

TEST(FileStore, AWaitEndsWhenTheEntryIsDoneOrAtItsDeadline) {
  FileStore store(FileStoreLimits{10, 1 << 20, 8});
  const std::string id = store.add(file_of("upload", "queued"));
  EXPECT_EQ(store.wait(id, FileStore::Clock::now() + std::chrono::milliseconds(20))->status, "queued");
  std::thread worker([&] { store.update(id, [](StoredFile& f) { f.status = "done"; }); });
  EXPECT_EQ(store.wait(id, FileStore::Clock::now() + std::chrono::seconds(30))->status, "done");
  worker.join();
  EXPECT_FALSE(store.wait("unknown", FileStore::Clock::now() + std::chrono::seconds(30)));
}

TEST(JobRunner, JobsRunAndAStopDropsTheQueuedOnesAndTellsTheRunningOne) {
  std::atomic<int> ran{0}, dropped{0}, saw_stop{0};
  std::atomic<bool> started{false};
  {
    JobRunner runner(1, 4);
    JobRunner::Job blocking;
    blocking.run = [&](const JobRunner::Stopping& stopping) {
      started = true;
      while (!stopping()) std::this_thread::yield();  // ends only when told
      ++saw_stop;
    };
    ASSERT_TRUE(runner.submit(blocking));
    for (int i = 0; i < 3; ++i) {
      JobRunner::Job job;
      job.run = [&](const JobRunner::Stopping&) { ++ran; };
      job.dropped = [&] { ++dropped; };
      ASSERT_TRUE(runner.submit(job));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    ASSERT_TRUE(started);
    runner.stop();
    JobRunner::Job late;
    late.run = [&](const JobRunner::Stopping&) { ++ran; };
    EXPECT_FALSE(runner.submit(late));
  }
  EXPECT_EQ(saw_stop, 1);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(dropped, 3);
}

TEST(JobRunner, AFullQueueRefusesAJob) {
  JobRunner runner(1, 0);
  JobRunner::Job job;
  job.run = [](const JobRunner::Stopping&) {};
  EXPECT_FALSE(runner.submit(job));
}

StoredGlossary glossary_of(const std::string& text, const std::string& format = "tsv") {
  StoredGlossary g;
  g.source_lang = "en";
  g.target_lang = "de";
  ordo::server::read_glossary_entries(text, format, 100, g);
  return g;
}

std::string error_of(const std::string& text, const std::string& format = "tsv") {
  try {
    glossary_of(text, format);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.what();
  }
  return "";
}

TEST(GlossaryEntries, TsvAndCsvGiveTheSameEntriesAndTsvComesBack) {
  const StoredGlossary tsv = glossary_of(
      "\xEF\xBB\xBF"
      "bicycle\tVelo\r\n\nstreet\t Strasse \n");
  ASSERT_EQ(tsv.entries.size(), 2u);
  EXPECT_EQ(ordo::server::glossary_tsv(tsv), "bicycle\tVelo\nstreet\tStrasse");
  const StoredGlossary csv = glossary_of("bicycle,Velo\n\"street\",\"Strasse\",EN,DE\n", "csv");
  EXPECT_EQ(csv.entries, tsv.entries);
  EXPECT_EQ(csv.glossary->size(), 2u);
}

TEST(GlossaryEntries, EachFaultNamesItsLine) {
  EXPECT_NE(error_of("a\tb\nno tab here").find("entries line 2: no tab"), std::string::npos);
  EXPECT_NE(error_of("a\tb\tc").find("entries line 1: more than one tab"), std::string::npos);
  EXPECT_NE(error_of("a\tb\na\tc").find("entries line 2: the source term 'a' is already"), std::string::npos);
  EXPECT_NE(error_of("a\t\x01").find("entries line 1: the target term holds a control character"), std::string::npos);
  EXPECT_NE(error_of("a\t ").find("entries line 1"), std::string::npos);
  EXPECT_NE(error_of("\"a,b", "csv").find("entries line 1: a quoted field is not closed"), std::string::npos);
  EXPECT_NE(error_of("a,b,fr,de", "csv").find("entries line 1: the languages"), std::string::npos);
  EXPECT_NE(error_of("a,b,c", "csv").find("entries line 1: 3 fields"), std::string::npos);
  EXPECT_NE(error_of("\n\n").find("no entry"), std::string::npos);
  EXPECT_NE(error_of("a\tb", "xlsx").find("entries_format"), std::string::npos);
}

TEST(GlossaryStore, AGlossaryIsSeenOnlyByItsOwnerAndTheCapsHold) {
  GlossaryStore store(2, 1000);
  StoredGlossary g = glossary_of("a\tb");
  g.owner = "one";
  const auto one = store.add(g);
  EXPECT_EQ(one->id.size(), 36u);
  EXPECT_TRUE(store.find("one", one->id));
  EXPECT_FALSE(store.find("two", one->id));
  EXPECT_TRUE(store.list("two").empty());
  EXPECT_FALSE(store.remove("two", one->id));
  store.add(g);
  EXPECT_THROW(store.add(g), ApiError);  // a third
  EXPECT_TRUE(store.remove("one", one->id));
  EXPECT_EQ(store.list("one").size(), 1u);
  GlossaryStore small(10, 5);
  StoredGlossary big = glossary_of("bicycle\tVelo");
  EXPECT_THROW(small.add(big), ApiError);
}

}  // namespace
