#include "launcher/elastic/round_planner.h"

#include <algorithm>
#include <map>
#include <set>

namespace hvdrun {
namespace {

// The usable hosts, those of live workers first (by their first worker), then the rest.
std::vector<HostSlots> OrderHosts(const std::vector<LiveWorker>& live, const std::vector<HostSlots>& usable) {
  std::vector<HostSlots> ordered;
  std::set<std::string> placed;
  for (const LiveWorker& worker : live) {
    if (placed.count(worker.host) > 0) continue;
    auto found = std::find_if(usable.begin(), usable.end(),
                              [&](const HostSlots& host) { return host.host == worker.host; });
    if (found == usable.end()) continue;
    ordered.push_back(*found);
    placed.insert(worker.host);
  }
  for (const HostSlots& host : usable) {
    if (placed.insert(host.host).second) ordered.push_back(host);
  }
  return ordered;
}

// Local and cross ranks, and the size, of places already in host-major order.
void Number(std::vector<WorkerPlace>& places) {
  std::map<std::string, int> local_size;
  for (const WorkerPlace& place : places) ++local_size[place.host];
  std::map<int, int> cross_size;  // local rank -> hosts having it
  std::map<std::string, int> next_local;
  for (WorkerPlace& place : places) {
    place.local_rank = next_local[place.host]++;
    place.local_size = local_size[place.host];
    place.cross_rank = cross_size[place.local_rank]++;
  }
  for (size_t i = 0; i < places.size(); ++i) {
    places[i].rank = static_cast<int>(i);
    places[i].size = static_cast<int>(places.size());
    places[i].cross_size = cross_size[places[i].local_rank];
  }
}

}  // namespace

RoundPlan PlanRound(const std::vector<LiveWorker>& live, const std::vector<HostSlots>& usable, int max_np,
                    const NewWorkerId& new_worker_id) {
  const std::vector<HostSlots> hosts = OrderHosts(live, usable);
  const size_t bound = max_np > 0 ? static_cast<size_t>(max_np) : SIZE_MAX;
  // Which live workers keep a place: by old rank order, within their host's slots and the bound.
  std::map<std::string, int> free_slots;
  for (const HostSlots& host : hosts) free_slots[host.host] = host.slots;
  std::set<std::string> kept;
  RoundPlan plan;
  for (const LiveWorker& worker : live) {
    auto slots = free_slots.find(worker.host);
    if (slots != free_slots.end() && slots->second > 0 && kept.size() < bound) {
      --slots->second;
      kept.insert(worker.worker_id);
    } else {
      plan.removed.push_back(worker.worker_id);
    }
  }
  size_t total = kept.size();
  for (const HostSlots& host : hosts) {
    for (const LiveWorker& worker : live) {
      if (worker.host == host.host && kept.count(worker.worker_id) > 0) {
        plan.places.push_back(WorkerPlace{worker.worker_id, host.host});
      }
    }
    const int already = static_cast<int>(std::count_if(
        plan.places.begin(), plan.places.end(), [&](const WorkerPlace& p) { return p.host == host.host; }));
    for (int slot = already; new_worker_id && slot < host.slots && total < bound; ++slot, ++total) {
      plan.places.push_back(WorkerPlace{new_worker_id(host.host, slot), host.host, true});
    }
  }
  Number(plan.places);
  return plan;
}

std::string PlaceValue(const WorkerPlace& place) {
  return std::to_string(place.rank) + " " + std::to_string(place.size) + " " +
         std::to_string(place.local_rank) + " " + std::to_string(place.local_size) + " " +
         std::to_string(place.cross_rank) + " " + std::to_string(place.cross_size) + " " + place.host;
}

}  // namespace hvdrun
