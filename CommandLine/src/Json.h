// Json.h - a small JSON reader, enough for the flat sidecar files that
// describe raw volumes (Testing/Data/*.json): objects, arrays, strings,
// numbers, true/false/null. Not a general-purpose library: no writer, no
// streaming, inputs are a few kilobytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace topovox
{
namespace cli
{

struct JsonValue
{
  enum Kind
  {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object
  } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string text; // String, and a Number's spelling (to tell 3 from 3.5)
  std::vector<JsonValue> items;                           // Array
  std::vector<std::pair<std::string, JsonValue>> members; // Object, in file order

  // The member named `key` of an object, or nullptr.
  const JsonValue* find(const std::string& key) const;
};

// Parses a whole document. Throws std::invalid_argument with the reason and
// the line and column where it went wrong.
JsonValue parseJson(const std::string& text);

} // namespace cli
} // namespace topovox
