// What ranks exchange in each negotiation cycle (runtime/negotiation/negotiated_stream.h runs the cycles).
//
// Every cycle starts with one SUM allreduce of a few int64 words holding CountedFields: a small
// counter per field, one field per status flag and one per response-cache slot. Each rank puts 1 in
// a field (its flag is set, or it has the cached request pending); the sum counts the ranks, so a
// cache slot whose count is the job size is ready everywhere, with no gather through rank 0 (a
// bitwise AND would say the same, but SUM is the one operation every backend has for integers).
// Only when some rank has something the cache cannot say (a request not in the cache, a cached
// name submitted with other parameters, a stall probe, a join) do the ranks also allgather their
// Announcements, encoded by EncodeAnnouncements.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_MESSAGE_H_
#define HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

// `fields` counters, each wide enough to count `ranks` ranks, packed into int64 words whose sign bit
// is never used (so a sum of non-negative words never overflows).
class CountedFields {
 public:
  CountedFields(size_t fields, int ranks);

  void Set(size_t field);  // this rank's 1
  // The count in `field` once words() holds the sum over ranks.
  int Count(size_t field) const;
  std::vector<int64_t>& words() { return words_; }
  const std::vector<int64_t>& words() const { return words_; }
  size_t fields() const { return fields_; }
  void Clear();

 private:
  size_t fields_;
  unsigned width_;  // bits per field
  size_t fields_per_word_;
  std::vector<int64_t> words_;
};

// One entry of a rank's announcement list.
struct Announcement {
  enum class Kind : uint8_t {
    kRequest = 0,     // a request not in the cache, pending on this rank
    kInvalidate = 1,  // this rank submitted `request.name`, which the cache holds with other
                      // parameters: every rank erases the entry and negotiates the name afresh
    kProbe = 2,       // a cached request pending here for longer than the stall limit: announced
                      // so that the ranks can name who has not submitted it; not a request
    kJoin = 3,        // this rank has joined (Runtime::Join) with nothing pending: until every rank
                      // has, it stands in for the others' allreduces with zeros. `request.count`
                      // holds the number of unnamed calls this rank has made, `request.name` is empty.
  };
  Kind kind = Kind::kRequest;
  TensorRequest request;

  bool operator==(const Announcement& other) const;
};

std::string EncodeAnnouncements(const std::vector<Announcement>& announcements);
// An error names what is malformed (a peer running another version, or memory corruption).
StatusOr<std::vector<Announcement>> DecodeAnnouncements(std::string_view bytes);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_MESSAGE_H_
