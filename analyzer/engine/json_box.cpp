// critpath — analyzer/engine/json_box.cpp: JsonBox (json_box.h).
#include "analyzer/engine/json_box.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace critpath::analyzer::engine {

JsonBox::JsonBox() : value_(std::make_unique<nlohmann::json>(nlohmann::json::object())) {}

JsonBox::JsonBox(const JsonBox& other) : value_(std::make_unique<nlohmann::json>(*other.value_)) {}

JsonBox::JsonBox(JsonBox&& other) : JsonBox() { value_.swap(other.value_); }

JsonBox& JsonBox::operator=(const JsonBox& other) {
  if (this != &other) *value_ = *other.value_;
  return *this;
}

JsonBox& JsonBox::operator=(JsonBox&& other) {
  if (this != &other) {
    *value_ = std::move(*other.value_);
    *other.value_ = nlohmann::json::object();
  }
  return *this;
}

JsonBox::~JsonBox() = default;

}  // namespace critpath::analyzer::engine
