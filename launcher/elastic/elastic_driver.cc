#include "launcher/elastic/elastic_driver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>
#include <utility>

#include "common/env_names.h"

namespace hvdrun {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Joined(const std::vector<std::string>& items, const std::string& none = "none") {
  if (items.empty()) return none;
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

std::string Slots(size_t n) { return std::to_string(n) + (n == 1 ? " slot" : " slots"); }

}  // namespace

StatusOr<std::vector<HostSlots>> FirstDiscoveredHosts(const ElasticOptions& options, int num_proc,
                                                      int start_timeout_s,
                                                      const std::function<void(const std::string&)>& say) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(start_timeout_s);
  std::string last;
  std::string last_left_out;
  while (true) {
    StatusOr<std::vector<HostSlots>> hosts = DiscoverHosts(options.discovery_script, options.slots_per_host);
    std::string left_out;
    if (hosts.ok()) {
      hosts =
          KeepAllowedHosts(std::move(hosts).value(), options.allowed, options.discovery_script, &left_out);
    }
    // Hosts left out of a list that suffices are the discovery thread's to name (once).
    if (hosts.ok() && TotalSlots(hosts.value()) >= num_proc) return hosts;
    if (!left_out.empty() && left_out != last_left_out) say(left_out);
    last_left_out = std::move(left_out);
    std::string now = hosts.ok() ? "it found " + Slots(static_cast<size_t>(TotalSlots(hosts.value())))
                                 : hosts.status().message();
    if (!hosts.ok() && now != last) say(now + "; trying again every second");
    last = now;
    if (std::chrono::steady_clock::now() + kDiscoveryPeriod > deadline) break;
    std::this_thread::sleep_for(kDiscoveryPeriod);
  }
  return Status::Error("--host-discovery-script: no " + std::to_string(num_proc) +
                       " slots for -np within --start-timeout " + std::to_string(start_timeout_s) +
                       " s (last: " + last + ")");
}

ElasticDriver::ElasticDriver(ElasticOptions options, const RankAssignment& first,
                             std::vector<HostSlots> hosts, Say say, bool verbose, Clock clock)
    : options_(std::move(options)),
      say_(std::move(say)),
      verbose_(verbose),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      blacklist_(options_.cooldown, clock_),
      usable_(std::move(hosts)) {
  for (const RankPlacement& place : first.ranks()) {
    const std::string& host = first.hosts()[place.host_index].host;
    workers_.push_back(
        Worker{host + "/" + std::to_string(place.local_rank) + "/" + std::to_string(place.rank), host});
    current_.push_back(place.rank);
  }
}

ElasticDriver::~ElasticDriver() = default;

std::vector<std::string> ElasticDriver::RankVariables(int index) const {
  return {std::string(env::kElastic) + "=1", std::string(env::kWorkerId) + "=" + workers_.at(index).id,
          std::string(env::kRound) + "=" + std::to_string(workers_.at(index).round),
          std::string(env::kElasticTimeoutSeconds) + "=" + std::to_string(options_.timeout_s)};
}

void ElasticDriver::Begin(SetKey set_key) {
  set_key_ = std::move(set_key);
  RoundPlan plan;
  std::map<std::string, int> index_of;
  std::vector<LiveWorker> live;
  for (int index : current_) {
    live.push_back(LiveWorker{workers_[index].id, workers_[index].host});
    index_of[workers_[index].id] = index;
  }
  // Round 0 is the launch's placement, which the planner gives again for the same hosts.
  plan = PlanRound(live, usable_, 0, nullptr);
  set_key_("elastic/hosts_updated", "0");
  Publish(plan, index_of);
  began_ = clock_();
  rounds_.push_back(JobRound{0, static_cast<int>(current_.size()), HostsOf(current_), {}, {}, "start", 0, 0});
  last_usable_ = usable_;
  if (!options_.discovery_script.empty()) {
    discovery_ = std::make_unique<HostDiscovery>(options_.discovery_script, options_.slots_per_host, usable_,
                                                 options_.allowed);
    discovery_->Start();
  }
}

bool ElasticDriver::WorkerEnded(int index, bool succeeded, const std::string& why) {
  Worker& worker = workers_.at(index);
  worker.alive = false;
  if (succeeded) {
    if (worker.in_round && !finishing_) {
      finishing_ = true;
      ReleaseWaitingWorkers();
    }
    return true;
  }
  if (finishing_ && worker.in_round) return false;
  worker.failure_taken = true;
  if (!worker.in_round || failed()) return true;  // removed, or the job is already failing
  blacklist_.Add(worker.host);
  lost_.emplace(worker.host, "worker " + worker.id + " " + why);
  const double now = clock_();
  if (!pending_since_) pending_since_ = now;
  last_event_ = now;
  pending_why_.push_back(worker.id + " " + why);
  return true;
}

bool ElasticDriver::Tick() {
  if (failed() || finishing_) return failed();
  WatchDiscovery();
  WatchUsableHosts();
  const double now = clock_();
  if (pending_since_ ? now - last_event_ >= kSettleSeconds : grow_since_.has_value()) Reform();
  if (!failed() && below_since_ && now - *below_since_ >= options_.timeout_s) {
    Fail(Slots(below_places_) + " alive for " + std::to_string(options_.timeout_s) +
         " s (--elastic-timeout), fewer than --min-np " + std::to_string(options_.min_np));
  }
  return failed();
}

int ElasticDriver::WakeInMs() const {
  if (!pending_since_ || failed() || finishing_) return -1;
  // Past the settle time, Tick() has run or runs after this turn (a job below --min-np waits
  // there, planning on every turn: no need to wake sooner).
  const double left = last_event_ + kSettleSeconds - clock_();
  return left <= 0 ? -1 : static_cast<int>(left * 1000) + 1;
}

void ElasticDriver::JobEnded() {
  if (failed() || finishing_ || !pending_since_) return;
  Fail("every worker ended before the job could re-form (" + Joined(pending_why_) + ")");
}

void ElasticDriver::WatchDiscovery() {
  if (discovery_ == nullptr) return;
  for (const std::string& warning : discovery_->TakeWarnings()) say_(warning);
  std::optional<std::vector<HostSlots>> change = discovery_->TakeChange();
  if (!change) return;
  std::set<std::string> now_there;
  for (const HostSlots& host : *change) now_there.insert(host.host);
  std::set<std::string> before;
  for (const HostSlots& host : usable_) before.insert(host.host);
  usable_ = std::move(*change);
  for (const std::string& host : HostsOf(current_)) {
    if (now_there.count(host) > 0) continue;
    lost_.emplace(host, "left the discovery script's hosts");
    notice_due_ = true;
    if (!pending_since_) pending_since_ = clock_();
    last_event_ = clock_();
    pending_why_.push_back(host + " left discovery");
  }
  for (const std::string& host : now_there) {
    if (before.count(host) == 0 && verbose_ && starter_ == nullptr) {
      say_("elastic: discovery found host " + host +
           "; a running job starts no new workers (docs/elastic.md)");
    }
  }
}

void ElasticDriver::WatchUsableHosts() {
  if (starter_ == nullptr || discovery_ == nullptr) return;
  std::vector<HostSlots> usable = blacklist_.Filter(usable_);
  if (usable == last_usable_) return;
  last_usable_ = std::move(usable);
  if (!grow_since_) grow_since_ = clock_();
}

void ElasticDriver::Reform() {
  RoundPlan plan;
  std::map<std::string, int> index_of;
  std::vector<std::string> reaching;
  if (!PlanNext(plan, index_of, reaching)) return;
  std::vector<std::string> grown_on;
  for (const WorkerPlace& place : plan.places) {
    if (place.is_new && std::find(grown_on.begin(), grown_on.end(), place.host) == grown_on.end()) {
      grown_on.push_back(place.host);
    }
  }
  if (!pending_since_ && grown_on.empty()) {
    grow_since_.reset();  // nothing to grow on
    return;
  }
  if (static_cast<int>(plan.places.size()) < options_.min_np) {
    below_places_ = plan.places.size();
    if (!below_since_) {
      below_since_ = clock_();
      say_("elastic: " + Slots(plan.places.size()) + " alive, fewer than --min-np " +
           std::to_string(options_.min_np) + " (" + Joined(pending_why_) + "); waiting up to " +
           std::to_string(options_.timeout_s) + " s (--elastic-timeout)");
    }
    return;
  }
  if (options_.reset_limit && resets_ >= *options_.reset_limit) {
    Fail("a re-formation past --reset-limit " + std::to_string(*options_.reset_limit) + " (" +
         Joined(pending_why_.empty() ? std::vector<std::string>{"new slots on " + Joined(grown_on)}
                                     : pending_why_) +
         ")");
    return;
  }
  ++resets_;
  ++round_;
  const double since = pending_since_ ? *pending_since_ : grow_since_.value_or(clock_());
  const std::vector<std::string> hosts_before = HostsOf(current_);
  // Before the round: whoever joins it reads the new count, so that only the older round's
  // workers see a change at their next commit.
  if (!grown_on.empty() || notice_due_) set_key_("elastic/hosts_updated", std::to_string(++notices_));
  // The new workers by launch index (the order PlanRound named them in).
  std::map<int, const WorkerPlace*> fresh;
  for (const WorkerPlace& place : plan.places) {
    if (place.is_new) fresh[index_of.at(place.worker_id)] = &place;
  }
  for (const auto& [index, place] : fresh) workers_.push_back(Worker{place->worker_id, place->host, round_});
  Publish(plan, index_of);
  Announce(hosts_before, grown_on, since);
  pending_since_.reset();
  pending_why_.clear();
  notice_due_ = false;
  below_since_.reset();
  grow_since_ = reaching.empty() ? std::nullopt : std::optional<double>(clock_());
  StartNewWorkers(plan, index_of);
}

bool ElasticDriver::PlanNext(RoundPlan& plan, std::map<std::string, int>& index_of,
                             std::vector<std::string>& reaching) {
  std::vector<LiveWorker> live;
  std::map<std::string, int> live_index;
  for (int index : current_) {
    if (!workers_[index].alive) continue;
    live.push_back(LiveWorker{workers_[index].id, workers_[index].host});
    live_index[workers_[index].id] = index;
  }
  std::vector<HostSlots> usable = blacklist_.Filter(usable_);
  const bool grows = starter_ != nullptr && discovery_ != nullptr;
  while (true) {
    index_of = live_index;
    int next = static_cast<int>(workers_.size());
    const NewWorkerId new_id = [&index_of, &next](const std::string& host, int local_rank) {
      std::string id = host + "/" + std::to_string(local_rank) + "/" + std::to_string(next);
      index_of[id] = next++;
      return id;
    };
    plan = PlanRound(live, usable, options_.max_np, grows ? new_id : nullptr);
    std::vector<std::string> waiting;
    if (grows && !NewHostsReady(plan, waiting)) return false;
    if (waiting.empty()) return true;
    // A growth waits for its hosts' agents; a re-formation goes on without them.
    if (!pending_since_) return false;
    reaching.insert(reaching.end(), waiting.begin(), waiting.end());
    std::erase_if(usable, [&waiting](const HostSlots& host) {
      return std::find(waiting.begin(), waiting.end(), host.host) != waiting.end();
    });
  }
}

bool ElasticDriver::NewHostsReady(const RoundPlan& plan, std::vector<std::string>& reaching) {
  bool fresh = true;
  std::set<std::string> asked;
  for (const WorkerPlace& place : plan.places) {
    if (!place.is_new || !asked.insert(place.host).second) continue;
    std::string why;
    switch (starter_->HostStateOf(place.host, &why)) {
      case WorkerStarter::HostState::kReady:
        break;
      case WorkerStarter::HostState::kNew:
        for (const HostSlots& host : usable_) {
          if (host.host == place.host) starter_->ReachHost(host);
        }
        if (verbose_) say_("elastic: host " + place.host + ": starting its agent for new workers");
        reaching.push_back(place.host);
        break;
      case WorkerStarter::HostState::kReaching:
        reaching.push_back(place.host);
        break;
      case WorkerStarter::HostState::kFailed:
        blacklist_.Add(place.host);
        say_("elastic: host " + place.host + ": " + why + "; the job goes on without it");
        fresh = false;
        break;
    }
  }
  return fresh;
}

void ElasticDriver::StartNewWorkers(const RoundPlan& plan, const std::map<std::string, int>& index_of) {
  for (size_t i = 0; i < plan.places.size(); ++i) {
    if (!plan.places[i].is_new) continue;
    const int index = index_of.at(plan.places[i].worker_id);
    Status started = starter_->StartWorker(index, plan.places, i, RankVariables(index));
    if (!started.ok()) WorkerEnded(index, false, "did not start: " + started.message());
  }
}

void ElasticDriver::Announce(const std::vector<std::string>& hosts_before,
                             const std::vector<std::string>& grown_on, double since) {
  std::vector<std::string> why = pending_why_;
  if (!grown_on.empty()) why.push_back("new slots on " + Joined(grown_on));
  const double now = clock_();
  JobRound record{
      round_,     static_cast<int>(current_.size()), HostsOf(current_), {}, {}, Joined(why), now - began_,
      now - since};
  for (const std::string& host : hosts_before) {
    if (std::find(record.hosts.begin(), record.hosts.end(), host) == record.hosts.end()) {
      record.lost.push_back(host);
    }
  }
  for (const std::string& host : record.hosts) {
    if (std::find(hosts_before.begin(), hosts_before.end(), host) == hosts_before.end()) {
      record.added.push_back(host);
    }
  }
  say_("elastic: round " + std::to_string(round_) + ": " + std::to_string(record.size) + " ranks on " +
       std::to_string(record.hosts.size()) + " hosts; hosts lost: " + Joined(record.lost) + "; added: " +
       Joined(record.added) + "; why: " + record.why + "; re-formed in " + Seconds(record.seconds));
  rounds_.push_back(std::move(record));
}

void ElasticDriver::ReleaseWaitingWorkers() {
  const bool grown = std::any_of(current_.begin(), current_.end(),
                                 [this](int index) { return workers_[index].round == round_ && round_ > 0; });
  if (!grown) return;
  const std::string prefix = "elastic/" + std::to_string(round_ + 1) + "/rank/";
  for (int index : current_) {
    if (workers_[index].alive) set_key_(prefix + workers_[index].id, "removed");
  }
  set_key_("elastic/round", std::to_string(round_ + 1));
}

void ElasticDriver::Publish(const RoundPlan& plan, const std::map<std::string, int>& index_of) {
  const std::string prefix = "elastic/" + std::to_string(round_) + "/rank/";
  std::vector<int> next;
  for (const WorkerPlace& place : plan.places) {
    set_key_(prefix + place.worker_id, PlaceValue(place));
    next.push_back(index_of.at(place.worker_id));
  }
  for (const std::string& id : plan.removed) {
    set_key_(prefix + id, "removed");
    workers_[index_of.at(id)].in_round = false;
  }
  set_key_("elastic/round", std::to_string(round_));
  current_ = std::move(next);
}

void ElasticDriver::Fail(std::string why) { failure_ = std::move(why); }

std::vector<std::string> ElasticDriver::FailureReport() const {
  std::vector<std::string> lines = {"elastic job failed in round " + std::to_string(round_) + ": " +
                                    failure_};
  std::vector<std::string> lost;
  for (const auto& [host, why] : lost_) lost.push_back(host + " (" + why + ")");
  lines.push_back("hosts lost: " + Joined(lost));
  return lines;
}

std::vector<std::string> ElasticDriver::HostsOf(const std::vector<int>& workers) const {
  std::vector<std::string> hosts;
  for (int index : workers) {
    const std::string& host = workers_[index].host;
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

nlohmann::json ElasticDriver::PlanJson() const {
  nlohmann::json plan = {{"min_np", options_.min_np},        {"max_np", nullptr},
                         {"host_discovery_script", nullptr}, {"elastic_timeout_s", options_.timeout_s},
                         {"reset_limit", nullptr},           {"blacklist_cooldown_range", nullptr}};
  if (options_.max_np > 0) plan["max_np"] = options_.max_np;
  if (!options_.discovery_script.empty()) plan["host_discovery_script"] = options_.discovery_script;
  if (options_.reset_limit) plan["reset_limit"] = *options_.reset_limit;
  if (options_.cooldown) {
    plan["blacklist_cooldown_range"] = {options_.cooldown->min_s, options_.cooldown->max_s};
  }
  return plan;
}

nlohmann::json ElasticDriver::SummaryJson() const {
  nlohmann::json summary = {{"rounds", rounds_.size()},
                            {"final_round", round_},
                            {"failure", nullptr},
                            {"hosts_lost", nlohmann::json::object()}};
  if (failed()) summary["failure"] = failure_;
  for (const auto& [host, why] : lost_) summary["hosts_lost"][host] = why;
  return summary;
}

}  // namespace hvdrun
