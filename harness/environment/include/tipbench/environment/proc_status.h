// One memory field of /proc/self/status, in bytes. Linux only.
//   std::int64_t rss = tipbench::proc_status_bytes("VmRSS");   // -1 when it cannot be read
#pragma once

#include <cstdint>
#include <string_view>

namespace tipbench {

// The field ("VmRSS", "VmHWM", ...) of /proc/self/status ("VmRSS:  1234 kB") in bytes, or -1.
std::int64_t proc_status_bytes(std::string_view field);

}  // namespace tipbench
