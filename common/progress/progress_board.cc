#include "common/progress/progress_board.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "common/process/file_descriptor.h"

namespace hvdrun::progress {
namespace {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the board's words must be lock-free");
static_assert(sizeof(std::atomic<uint64_t>) == 8, "a board word is 8 bytes");

constexpr uint64_t kMagic = 0x31676f7270647668;  // "hvdprog1" in little-endian byte order
constexpr uint32_t kVersion = 1;

// Header words.
enum : size_t { kMagicWord = 0, kShapeWord, kSubmittedWord, kCompletedWord, kFailedWord, kPidWord };
// Record words.
enum : size_t {
  kLockWord = 0,
  kSequenceWord,
  kBytesWord,
  kMetaWord,   // process set (low 32 bits), phase, name length, op length (a byte each)
  kTimesWord,  // four: submitted, negotiated, backend, done
  kOpWord = kTimesWord + 4,
  kNameWord = kOpWord + kOpBytes / 8,
};
static_assert(kNameWord + kNameBytes / 8 == kRecordWords);

uint64_t Meta(int32_t process_set, protocol::CollectivePhase phase, size_t name_length, size_t op_length) {
  return static_cast<uint32_t>(process_set) | (uint64_t{static_cast<uint8_t>(phase)} << 32) |
         (uint64_t{name_length} << 40) | (uint64_t{op_length} << 48);
}

void StoreText(std::atomic<uint64_t>* words, std::string_view text) {
  for (size_t i = 0; i * 8 < text.size(); ++i) {
    uint64_t word = 0;
    std::memcpy(&word, text.data() + i * 8, std::min<size_t>(8, text.size() - i * 8));
    words[i].store(word, std::memory_order_relaxed);
  }
}

std::string LoadText(const std::atomic<uint64_t>* words, size_t length) {
  std::string text(length, '\0');
  for (size_t i = 0; i * 8 < length; ++i) {
    const uint64_t word = words[i].load(std::memory_order_relaxed);
    std::memcpy(text.data() + i * 8, &word, std::min<size_t>(8, length - i * 8));
  }
  return text;
}

// One consistent copy of a record, or false when it is being written (or was never written).
bool ReadRecord(const std::atomic<uint64_t>* record, protocol::FlightRecord* out) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t before = record[kLockWord].load(std::memory_order_acquire);
    if (before % 2 == 1) continue;
    protocol::FlightRecord copy;
    copy.sequence = record[kSequenceWord].load(std::memory_order_relaxed);
    copy.bytes = record[kBytesWord].load(std::memory_order_relaxed);
    const uint64_t meta = record[kMetaWord].load(std::memory_order_relaxed);
    copy.process_set = static_cast<int32_t>(static_cast<uint32_t>(meta));
    const auto phase = static_cast<uint8_t>(meta >> 32);
    copy.name = LoadText(record + kNameWord, std::min<size_t>(kNameBytes, (meta >> 40) & 0xff));
    copy.op = LoadText(record + kOpWord, std::min<size_t>(kOpBytes, (meta >> 48) & 0xff));
    int64_t* times[] = {&copy.submitted_unix_ms, &copy.negotiated_unix_ms, &copy.backend_unix_ms,
                        &copy.done_unix_ms};
    for (size_t i = 0; i < 4; ++i) {
      *times[i] = static_cast<int64_t>(record[kTimesWord + i].load(std::memory_order_relaxed));
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (record[kLockWord].load(std::memory_order_relaxed) != before) continue;
    if (copy.sequence == 0 || phase < static_cast<uint8_t>(protocol::CollectivePhase::kSubmitted) ||
        phase > static_cast<uint8_t>(protocol::CollectivePhase::kFailed)) {
      return false;
    }
    copy.phase = static_cast<protocol::CollectivePhase>(phase);
    *out = std::move(copy);
    return true;
  }
  return false;
}

// The summary fields of `progress` that the records give: the last collective done, the oldest
// pending, the one inside the backend. `records` are sorted by sequence.
void Summarise(const std::vector<protocol::FlightRecord>& records, protocol::RankProgress* progress) {
  const protocol::FlightRecord* last_done = nullptr;
  const protocol::FlightRecord* oldest_pending = nullptr;
  const protocol::FlightRecord* in_backend = nullptr;
  for (const protocol::FlightRecord& record : records) {
    if (record.phase == protocol::CollectivePhase::kDone) {
      if (last_done == nullptr || record.done_unix_ms >= last_done->done_unix_ms) last_done = &record;
    } else if (record.phase != protocol::CollectivePhase::kFailed) {
      if (oldest_pending == nullptr) oldest_pending = &record;
      if (in_backend == nullptr && record.phase == protocol::CollectivePhase::kInBackend) {
        in_backend = &record;
      }
    }
  }
  if (last_done != nullptr) {
    progress->last_completed_name = last_done->name;
    progress->last_completed_unix_ms = last_done->done_unix_ms;
  }
  if (oldest_pending != nullptr) {
    progress->oldest_pending_name = oldest_pending->name;
    progress->oldest_pending_since_unix_ms = oldest_pending->submitted_unix_ms;
    progress->process_set = oldest_pending->process_set;
  }
  if (in_backend != nullptr) {
    progress->in_backend = true;
    progress->backend_name = in_backend->name;
    progress->backend_op = in_backend->op;
    progress->backend_bytes = in_backend->bytes;
    progress->backend_since_unix_ms = in_backend->backend_unix_ms;
    progress->process_set = in_backend->process_set;
  }
}

}  // namespace

size_t BoardBytes(uint32_t records) { return (kHeaderWords + size_t{records} * kRecordWords) * 8; }

int64_t UnixMillisNow() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1000000;
}

StatusOr<std::unique_ptr<ProgressBoard>> ProgressBoard::Create(const std::string& path, uint32_t records) {
  if (records == 0 || records > kMaxRecords) {
    return Status::Error("progress board '" + path + "': " + std::to_string(records) +
                         " records is outside 1.." + std::to_string(kMaxRecords));
  }
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  const size_t bytes = BoardBytes(records);
  if (!fd.valid() || ::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return Status::Error("cannot create progress board '" + path + "': " + std::strerror(errno));
  }
  void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mapped == MAP_FAILED) {
    return Status::Error("cannot map progress board '" + path + "': " + std::strerror(errno));
  }
  // The file is zero-filled: every record's lock is even and its sequence 0 (never written).
  auto* words = static_cast<std::atomic<uint64_t>*>(mapped);
  words[kShapeWord].store((uint64_t{kVersion} << 32) | records, std::memory_order_relaxed);
  words[kPidWord].store(static_cast<uint64_t>(::getpid()), std::memory_order_relaxed);
  words[kMagicWord].store(kMagic, std::memory_order_release);
  return std::unique_ptr<ProgressBoard>(new ProgressBoard(words, bytes, records));
}

ProgressBoard::ProgressBoard(std::atomic<uint64_t>* words, size_t bytes, uint32_t capacity)
    : words_(words), bytes_(bytes), capacity_(capacity) {}

ProgressBoard::~ProgressBoard() { ::munmap(words_, bytes_); }

std::atomic<uint64_t>* ProgressBoard::Record(uint64_t sequence) const {
  return words_ + kHeaderWords + ((sequence - 1) % capacity_) * kRecordWords;
}

uint64_t ProgressBoard::Submitted(std::string_view name, std::string_view op, uint64_t bytes,
                                  int32_t process_set) {
  const uint64_t sequence = words_[kSubmittedWord].fetch_add(1, std::memory_order_relaxed) + 1;
  name = name.substr(0, kNameBytes);
  op = op.substr(0, kOpBytes);
  std::atomic<uint64_t>* record = Record(sequence);
  const uint64_t lock = record[kLockWord].load(std::memory_order_relaxed);
  record[kLockWord].store(lock + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  record[kSequenceWord].store(sequence, std::memory_order_relaxed);
  record[kBytesWord].store(bytes, std::memory_order_relaxed);
  record[kMetaWord].store(Meta(process_set, protocol::CollectivePhase::kSubmitted, name.size(), op.size()),
                          std::memory_order_relaxed);
  record[kTimesWord].store(static_cast<uint64_t>(UnixMillisNow()), std::memory_order_relaxed);
  for (size_t i = 1; i < 4; ++i) record[kTimesWord + i].store(0, std::memory_order_relaxed);
  StoreText(record + kOpWord, op);
  StoreText(record + kNameWord, name);
  record[kLockWord].store(lock + 2, std::memory_order_release);
  return sequence;
}

void ProgressBoard::Advance(uint64_t sequence, protocol::CollectivePhase phase) {
  if (phase == protocol::CollectivePhase::kDone) {
    words_[kCompletedWord].fetch_add(1, std::memory_order_relaxed);
  } else if (phase == protocol::CollectivePhase::kFailed) {
    words_[kFailedWord].fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<uint64_t>* record = Record(sequence);
  if (record[kSequenceWord].load(std::memory_order_relaxed) != sequence) return;  // dropped from the ring
  const uint64_t lock = record[kLockWord].load(std::memory_order_relaxed);
  record[kLockWord].store(lock + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const uint64_t meta = record[kMetaWord].load(std::memory_order_relaxed);
  record[kMetaWord].store((meta & ~(uint64_t{0xff} << 32)) | (uint64_t{static_cast<uint8_t>(phase)} << 32),
                          std::memory_order_relaxed);
  // kNegotiated, kInBackend, kDone each have their time; kFailed shares kDone's.
  const size_t time = std::min<size_t>(static_cast<size_t>(phase) - 1, 3);
  record[kTimesWord + time].store(static_cast<uint64_t>(UnixMillisNow()), std::memory_order_relaxed);
  record[kLockWord].store(lock + 2, std::memory_order_release);
}

Status ReadProgressBoard(const std::string& path, bool with_records, protocol::RankProgress* progress) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0) {
    return Status::Error("cannot open progress board '" + path + "': " + std::strerror(errno));
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size < BoardBytes(0)) return Status::Error("progress board '" + path + "' is not written yet");
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (mapped == MAP_FAILED) {
    return Status::Error("cannot map progress board '" + path + "': " + std::strerror(errno));
  }
  const auto* words = static_cast<const std::atomic<uint64_t>*>(mapped);
  Status status = Status::Ok();
  const uint64_t shape = words[kShapeWord].load(std::memory_order_relaxed);
  const auto capacity = static_cast<uint32_t>(shape);
  if (words[kMagicWord].load(std::memory_order_acquire) != kMagic || (shape >> 32) != kVersion ||
      capacity == 0 || capacity > kMaxRecords || BoardBytes(capacity) > size) {
    status = Status::Error("'" + path + "' is not a progress board of this version");
  } else {
    protocol::RankProgress read = *progress;
    read.board_read = true;
    const uint64_t submitted = words[kSubmittedWord].load(std::memory_order_relaxed);
    read.completed = words[kCompletedWord].load(std::memory_order_relaxed);
    read.failed = words[kFailedWord].load(std::memory_order_relaxed);
    read.pending = submitted >= read.completed + read.failed ? submitted - read.completed - read.failed : 0;
    std::vector<protocol::FlightRecord> records;
    for (uint32_t i = 0; i < capacity; ++i) {
      protocol::FlightRecord record;
      if (ReadRecord(words + kHeaderWords + size_t{i} * kRecordWords, &record)) records.push_back(record);
    }
    std::sort(records.begin(), records.end(),
              [](const auto& a, const auto& b) { return a.sequence < b.sequence; });
    Summarise(records, &read);
    if (with_records) read.records = std::move(records);
    *progress = std::move(read);
  }
  ::munmap(mapped, size);
  return status;
}

}  // namespace hvdrun::progress
