// How the NCCL backend averages: which NCCL call, decided from the NCCL library the process loaded
// (ncclGetVersion, not the headers built against) and the communicator's size.
//
// One rank: an allreduce of any op is the input itself, so the backend makes no NCCL call at all
// (a device-to-device copy when out of place). NCCL's one-rank ncclAvg (and any pre-multiplied
// sum) runs a kernel that, from 2.19 up to 2.29.6, leaves the tail of the output unwritten when the
// count does not split evenly over its blocks (NVIDIA/nccl issue 1950, fixed in 2.29.7: float64
// count 1,000,003 loses 3 elements). In place the stale tail happens to equal the answer.
//
// Several ranks: ncclAvg where the library has it (2.10 and later: floating types pre-multiplied
// by 1/size and summed; integers summed and divided, truncating toward zero); before 2.10, ncclSum
// and then a division on the backend's stream (nccl_scale.h).
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_AVERAGE_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_AVERAGE_H_

namespace hvdrun {

enum class NcclAverage {
  kNoCall,        // one rank: the output is the input
  kAvg,           // ncclAvg
  kSumThenDivide  // ncclSum, then ScaleOnStream's division by the size
};

// `version_code` as ncclGetVersion returns it: major*10000 + minor*100 + patch from 2.9 on
// (22809 is 2.28.9), major*1000 + minor*100 + patch before (2803 is 2.8.3).
NcclAverage ChooseNcclAverage(int version_code, int size);

// "2.28.9" from a version code of either encoding.
const char* NcclVersionText(int version_code, char (&text)[16]);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_AVERAGE_H_
