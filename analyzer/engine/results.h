// critpath — analyzer/engine/results.h
//
// The passes' results, typed. A pass declares a key per result it produces, next to the
// result's type, and everything else reads the result through that key:
//
//   passes/wait_states/wait_states.h:   inline constexpr engine::ResultKey<WaitStates> kWaitStates{"wait_states"};
//   producer:  results.publish(kWaitStates, std::move(ws));
//   reader:    const WaitStates* ws = results.find(kWaitStates);   // nullptr: not produced
//
// A key's identity is its address (one inline variable per key), and its type parameter fixes
// the type stored under it: no string lookup, no casts by the reader. Results are immutable
// for their readers. A pass that refines another's result publishes a new one under its own
// key. Window by window (engine/window.h) a producer extends its result from window to window:
// it takes it back with withdraw() at the start of the next window (the previous window's
// readers are done with it) and publishes the extended one; a window's result replaces the
// previous window's. The key's name is what PassInfo::needs lists (passes/pass_list.cpp).
#pragma once

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace critpath::analyzer::engine {

template <typename T>
struct ResultKey {
  const char* name;
};

class Results {
 public:
  // Stores `value` under `key`, replacing what was there; returns the stored value.
  template <typename T>
  const T& publish(const ResultKey<T>& key, T value) {
    T* p = new T(std::move(value));
    put(&key, key.name, Value(p, [](void* v) { delete static_cast<T*>(v); }));
    return *p;
  }
  // The result under `key`, or nullptr when nobody published it.
  template <typename T>
  const T* find(const ResultKey<T>& key) const {
    return static_cast<const T*>(lookup(&key));
  }
  // The producer's own result back (moved out and removed), to be extended and published
  // again; a default-made T when there was none.
  template <typename T>
  T withdraw(const ResultKey<T>& key) {
    T out{};
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == &key) {
        out = std::move(*static_cast<T*>(it->value.get()));
        entries_.erase(it);
        break;
      }
    return out;
  }
  // Whether a result named `name` is present (PassInfo::needs).
  bool has(const char* name) const {
    for (const Entry& e : entries_)
      if (std::strcmp(e.name, name) == 0) return true;
    return false;
  }

 private:
  using Value = std::unique_ptr<void, void (*)(void*)>;
  struct Entry {
    const void* key;
    const char* name;
    Value value;
  };
  void put(const void* key, const char* name, Value v) {
    for (Entry& e : entries_)
      if (e.key == key) {
        e.value = std::move(v);
        return;
      }
    entries_.push_back(Entry{key, name, std::move(v)});
  }
  const void* lookup(const void* key) const {
    for (const Entry& e : entries_)
      if (e.key == key) return e.value.get();
    return nullptr;
  }

  std::vector<Entry> entries_;
};

}  // namespace critpath::analyzer::engine
