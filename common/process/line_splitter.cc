#include "common/process/line_splitter.h"

namespace hvdrun {

void LineSplitter::Feed(std::string_view bytes, const EmitFn& emit) {
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    std::string_view chunk = bytes.substr(0, newline);
    // Emit full pieces of an overlong line as they fill up.
    while (partial_.size() + chunk.size() > max_piece_) {
      size_t take = max_piece_ - partial_.size();
      partial_.append(chunk.substr(0, take));
      emit(partial_, false);
      partial_.clear();
      chunk.remove_prefix(take);
    }
    if (newline == std::string_view::npos) {
      partial_.append(chunk);
      return;
    }
    if (partial_.empty()) {
      emit(chunk, true);
    } else {
      partial_.append(chunk);
      emit(partial_, true);
      partial_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
}

void LineSplitter::Finish(const EmitFn& emit) {
  if (partial_.empty()) return;
  emit(partial_, false);
  partial_.clear();
}

}  // namespace hvdrun
