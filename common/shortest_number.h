// ShortestNumberText: the shortest decimal text that reads back as the same double ("0.1", "2",
// "1e+20"), for JSON and one-line messages. Written with snprintf's %.Ng rather than
// std::to_chars, which GCC 10's library (the relocatable bundle's baseline) lacks for floating
// point. Not finite values come out as snprintf writes them ("inf", "nan"); callers writing JSON
// handle those first. Pure and thread-safe (in the C locale every hvdrun program runs in).
#ifndef HVDRUN_COMMON_SHORTEST_NUMBER_H_
#define HVDRUN_COMMON_SHORTEST_NUMBER_H_

#include <string>

namespace hvdrun {

std::string ShortestNumberText(double value);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_SHORTEST_NUMBER_H_
