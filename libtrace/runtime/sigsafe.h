// critpath — libtrace/runtime/sigsafe.h
//
// Tools for the code that writes a partial trace from a signal handler, an exit handler or
// the MPI_Abort wrapper (analyzer/session/fault.cpp), where the process may be in any state:
// another thread may hold malloc's lock or one of critpath's mutexes, and memory may be
// corrupt. Everything here is async-signal-safe in practice: write(2), nanosleep(2), no
// allocation, and locks only tried, never waited for indefinitely.
//
// lock() uses std::mutex::try_lock (pthread_mutex_trylock: one atomic compare-and-swap in
// glibc; POSIX does not list it as async-signal-safe, but it never blocks and never
// allocates).
#pragma once

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace critpath::runtime::sigsafe {

// Takes `m` if it becomes free within about one second; false: it did not (its owner may be
// the interrupted thread itself), and the caller leaves out what it protects.
inline bool lock(std::mutex& m) {
  for (int i = 0; i < 1000; ++i) {
    if (m.try_lock()) return true;
    const timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  return false;
}

// write(2) of the whole range, retried on EINTR and short writes. False on any error.
inline bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

// Decimal digits of v into out (at least 20 bytes); returns their number. No terminator.
inline size_t format_u64(char* out, uint64_t v) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = char('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

// Buffered text output to a file descriptor through a fixed buffer. ok() turns false at the
// first failed write and stays so; later output is dropped.
class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { flush(); }

  Writer& put(const char* s, size_t n) {
    while (n > 0) {
      if (n_ == sizeof buf_) flush();
      const size_t k = n < sizeof buf_ - n_ ? n : sizeof buf_ - n_;
      std::memcpy(buf_ + n_, s, k);
      n_ += k;
      s += k;
      n -= k;
    }
    return *this;
  }
  Writer& put(const char* s) { return put(s, std::strlen(s)); }
  Writer& put_u64(uint64_t v) {
    char d[20];
    return put(d, format_u64(d, v));
  }
  Writer& put_i64(int64_t v) {
    if (v < 0) {
      put("-", 1);
      return put_u64(uint64_t(0) - uint64_t(v));
    }
    return put_u64(uint64_t(v));
  }
  Writer& put_bool(bool v) { return put(v ? "true" : "false"); }
  // A JSON string: quotes, escapes, and U+FFFD for every byte that is not part of valid
  // UTF-8 (JSON readers reject invalid UTF-8).
  Writer& put_json_string(const char* s, size_t n) {
    put("\"", 1);
    for (size_t i = 0; i < n;) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        const char e[2] = {'\\', char(c)};
        put(e, 2);
        ++i;
      } else if (c < 0x20) {
        static const char hex[] = "0123456789abcdef";
        const char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        put(e, 6);
        ++i;
      } else if (c < 0x80) {
        put(s + i, 1);
        ++i;
      } else {
        const size_t len = utf8_length(reinterpret_cast<const unsigned char*>(s) + i, n - i);
        if (len == 0) {
          put("\\ufffd", 6);
          ++i;
        } else {
          put(s + i, len);
          i += len;
        }
      }
    }
    return put("\"", 1);
  }
  void flush() {
    if (n_ > 0 && ok_) ok_ = write_all(fd_, buf_, n_);
    n_ = 0;
  }
  bool ok() const { return ok_; }

 private:
  // Length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 when it is not one.
  static size_t utf8_length(const unsigned char* p, size_t avail) {
    size_t len = 0;
    uint32_t min = 0;
    if ((p[0] & 0xe0) == 0xc0) {
      len = 2;
      min = 0x80;
    } else if ((p[0] & 0xf0) == 0xe0) {
      len = 3;
      min = 0x800;
    } else if ((p[0] & 0xf8) == 0xf0) {
      len = 4;
      min = 0x10000;
    } else {
      return 0;
    }
    if (len > avail) return 0;
    uint32_t cp = p[0] & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((p[k] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
  }

  int fd_;
  bool ok_ = true;
  size_t n_ = 0;
  char buf_[4096];
};

}  // namespace critpath::runtime::sigsafe
