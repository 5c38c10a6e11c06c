// How the local ranks of one host come to map the same segment: ShmSegment::Open's steps
// (runtime/shm/shm_segment.h states the contract: memfd, hand-over over an abstract Unix socket to
// published local ranks only, all succeed or all fail).
//
// Local rank 0 creates the segment, publishes its socket's name (or its error) and hands the memfd
// to the others; they receive it and map it. Each of the two returns the mapping of
// shm_layout::SegmentBytes(local_size, slot_bytes) bytes, or nullptr with `error` set, and sets
// `description` ("memfd:hvdrun-shm (inode N)"). The creator has written the segment's header
// (runtime/shm/shm_layout.h); a receiver has checked it.
//
// Thread-compatible: each call uses only its arguments and the store.
#ifndef HVDRUN_RUNTIME_SHM_SHM_BOOTSTRAP_H_
#define HVDRUN_RUNTIME_SHM_SHM_BOOTSTRAP_H_

#include <cstddef>
#include <string>

#include "hvdrun/key_value_store.h"
#include "runtime/shm/shm_group.h"

namespace hvdrun {

// Local rank 0's step.
void* CreateAndHandOverSegment(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes,
                               std::string* description, std::string* error);
// Every other local rank's step.
void* ReceiveSegment(KeyValueStore& store, const ShmGroup& group, size_t slot_bytes, std::string* description,
                     std::string* error);
// Publishes this rank's `error` (empty: mapped) and, when it has none, reads every local rank's:
// the failure to report (this rank's own first), or "" when all of them mapped the segment. A rank
// with an error of its own does not wait for the others: it fails whatever they did, and they
// learn of it from its key.
std::string AgreeOnSegmentOutcome(KeyValueStore& store, const ShmGroup& group, const std::string& error);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_BOOTSTRAP_H_
