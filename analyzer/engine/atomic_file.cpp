// critpath — analyzer/engine/atomic_file.cpp
#include "analyzer/engine/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace critpath::analyzer {
namespace {
thread_local std::string t_last_error;

Status failed(const std::string& path, int err) {
  t_last_error = path + ": " + std::strerror(err);
  return Status::kIoError;
}
}  // namespace

const std::string& last_write_error() { return t_last_error; }

Status write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return failed(path, errno);
  int err = 0;
  bool ok = true;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      ok = false;
      err = n < 0 ? errno : ENOSPC;
    }
  }
  // Delayed allocation reports a full device only here.
  if (ok && ::fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    ok = false;
    err = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return Status::kOk;
  if (ok) err = errno;
  ::unlink(tmp.c_str());
  return failed(path, err);
}

}  // namespace critpath::analyzer
