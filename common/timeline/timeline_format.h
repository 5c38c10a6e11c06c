// The names that a rank's timeline file (runtime/timeline/timeline.h writes it) and the merged timeline
// (common/timeline/timeline_merge.h reads every rank's) agree on, declared once.
//
// Both files are Chrome-trace JSON arrays ("[ {event}, {event}, ... ]", the format chrome://tracing
// and Perfetto open): one event per line, pid = rank, ts and dur in microseconds since the rank's
// zero. The names below are hvdrun's additions to the format's own ("process_name", ...).
#ifndef HVDRUN_COMMON_TIMELINE_TIMELINE_FORMAT_H_
#define HVDRUN_COMMON_TIMELINE_TIMELINE_FORMAT_H_

namespace hvdrun::timeline_format {

// The format's own metadata ("ph":"M") names, whose args are {"name": ...} or {"sort_index": ...}.
inline constexpr const char* kProcessName = "process_name";
inline constexpr const char* kProcessSortIndex = "process_sort_index";
inline constexpr const char* kThreadName = "thread_name";
inline constexpr const char* kThreadSortIndex = "thread_sort_index";

// Metadata event, first in every rank's file, whose args say where the rank's zero lies on its
// host's wall clock: {"zero_unix_us": microseconds since the Unix epoch, "rank": R, "host": H}.
// Ranks set their zeros together (after a barrier), so ts values of different ranks compare to
// within the barrier's skew; zero_unix_us differs between hosts also by their clocks' offsets.
inline constexpr const char* kClockMetadata = "hvdrun_timeline_clock";
inline constexpr const char* kZeroUnixMicrosArg = "zero_unix_us";

// Instant event a rank writes, last in its file, once its byte limit made it drop events:
// args {"dropped_events": N, "byte_limit": bytes}; ts is that of the first dropped event.
inline constexpr const char* kEventsDropped = "TIMELINE_EVENTS_DROPPED";
inline constexpr const char* kDroppedEventsArg = "dropped_events";
inline constexpr const char* kByteLimitArg = "byte_limit";

// Instant event the merger adds to a rank whose file ended before its closing bracket, was not a
// Chrome trace, or could not be read: args {"note": why, "events_kept": N}.
inline constexpr const char* kTruncated = "TIMELINE_TRUNCATED";

}  // namespace hvdrun::timeline_format

#endif  // HVDRUN_COMMON_TIMELINE_TIMELINE_FORMAT_H_
