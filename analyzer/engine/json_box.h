// critpath — analyzer/engine/json_box.h
//
// A JSON value held by pointer, so that a header can carry one (report_input.h's extra_json,
// metric_store.h's Scalars) without including <nlohmann/json.hpp>: its templates cost each file
// that includes it about 2 s of compile time (more under the sanitizers), and most of the files
// that include those headers never touch JSON. Who reads or writes the value includes
// <nlohmann/json.hpp> and dereferences the box.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace critpath::analyzer::engine {

class JsonBox {
 public:
  JsonBox();  // an empty object
  JsonBox(const JsonBox& other);
  // A moved-from box holds an empty object again (never a null pointer).
  JsonBox(JsonBox&& other);
  JsonBox& operator=(const JsonBox& other);
  JsonBox& operator=(JsonBox&& other);
  ~JsonBox();

  nlohmann::json& operator*() { return *value_; }
  const nlohmann::json& operator*() const { return *value_; }
  nlohmann::json* operator->() { return value_.get(); }
  const nlohmann::json* operator->() const { return value_.get(); }

 private:
  std::unique_ptr<nlohmann::json> value_;
};

}  // namespace critpath::analyzer::engine
