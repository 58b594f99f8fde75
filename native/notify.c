/* notify.c: sd_notify(3) for Node: sends one datagram to the unix socket named by $NOTIFY_SOCKET. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <node_api.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef AZC_NOTIFY_UNSUPPORTED
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#endif

/* Large enough for every state systemd defines; longer messages are a caller bug. */
#define AZC_MAX_MESSAGE 4096

static const char *errno_code(int err) {
  switch (err) {
    case ENOENT: return "ENOENT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EAGAIN: return "EAGAIN";
    case EMSGSIZE: return "EMSGSIZE";
    case ENOBUFS: return "ENOBUFS";
    case ENOTDIR: return "ENOTDIR";
    case EPROTOTYPE: return "EPROTOTYPE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EINVAL: return "EINVAL";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    default: return "ERR_SD_NOTIFY";
  }
}

/* Throws an Error with .code (errno name) and .errno set; returns NULL for the caller to return. */
static napi_value throw_errno(napi_env env, int err, const char *what, const char *target) {
  char message[512];
  snprintf(message, sizeof message, "sd_notify: %s %s: %s", what, target, strerror(err));
  napi_value code, msg, error, errno_value;
  if (napi_create_string_utf8(env, errno_code(err), NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg) != napi_ok ||
      napi_create_error(env, code, msg, &error) != napi_ok) {
    napi_throw_error(env, errno_code(err), message);
    return NULL;
  }
  if (napi_create_int32(env, err, &errno_value) == napi_ok) {
    napi_set_named_property(env, error, "errno", errno_value);
  }
  napi_throw(env, error);
  return NULL;
}

static napi_value boolean(napi_env env, bool value) {
  napi_value result;
  napi_get_boolean(env, value, &result);
  return result;
}

/* notify(message: string): boolean. false without NOTIFY_SOCKET, true once sent, throws on failure. */
static napi_value Notify(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_valuetype type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc >= 1) napi_typeof(env, argv[0], &type);
  if (type != napi_string) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "notify(message): message must be a string");
    return NULL;
  }

  char message[AZC_MAX_MESSAGE + 1];
  size_t length = 0;
  if (napi_get_value_string_utf8(env, argv[0], NULL, 0, &length) != napi_ok) return NULL;
  if (length == 0 || length > AZC_MAX_MESSAGE) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "notify(message): message must be 1 to 4096 bytes of UTF-8");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], message, sizeof message, &length);

  const char *socket_path = getenv("NOTIFY_SOCKET");
  if (socket_path == NULL || socket_path[0] == '\0') return boolean(env, false);

#ifdef AZC_NOTIFY_UNSUPPORTED
  napi_throw_error(env, "ERR_SD_NOTIFY", "sd_notify: unix datagram sockets are only supported on Linux");
  return NULL;
#else
  /* systemd hands out either a filesystem path or an abstract address written with a leading '@'. */
  if (socket_path[0] != '/' && socket_path[0] != '@') {
    return throw_errno(env, EAFNOSUPPORT, "NOTIFY_SOCKET must be an absolute path or an @abstract name, not", socket_path);
  }
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  size_t path_length = strlen(socket_path);
  if (path_length >= sizeof address.sun_path) return throw_errno(env, ENAMETOOLONG, "address", socket_path);
  memcpy(address.sun_path, socket_path, path_length);
  socklen_t address_length;
  if (socket_path[0] == '@') {
    address.sun_path[0] = '\0'; /* abstract namespace: no trailing NUL is part of the name */
    address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_length);
  } else {
    address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_length + 1);
  }

  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, errno, "socket() for", socket_path);
  ssize_t sent;
  do {
    sent = sendto(fd, message, length, MSG_NOSIGNAL, (struct sockaddr *)&address, address_length);
  } while (sent < 0 && errno == EINTR);
  int send_errno = errno;
  close(fd);
  if (sent < 0) return throw_errno(env, send_errno, "sendto", socket_path);
  if ((size_t)sent != length) return throw_errno(env, EMSGSIZE, "short sendto", socket_path);
  return boolean(env, true);
#endif
}

/*
 * fixMallocThresholds(): boolean. glibc's malloc starts with a 128 KiB mmap threshold and trim threshold and raises
 * both when a block it mapped is freed: after a password hash (scrypt's 16 MiB) blocks up to 16 MiB come from the
 * heap and up to 32 MiB of freed heap stays with the process. Setting them keeps them at their starting values (see
 * ARCHITECTURE.md, "Memory"). false where the C library is not glibc.
 */
static napi_value FixMallocThresholds(napi_env env, napi_callback_info info) {
  (void)info;
#ifdef __GLIBC__
  int mmap_ok = mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  int trim_ok = mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  return boolean(env, mmap_ok == 1 && trim_ok == 1);
#else
  return boolean(env, false);
#endif
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  if (napi_create_function(env, "notify", NAPI_AUTO_LENGTH, Notify, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "notify", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "fixMallocThresholds", NAPI_AUTO_LENGTH, FixMallocThresholds, NULL, &fn) != napi_ok)
    return NULL;
  if (napi_set_named_property(env, exports, "fixMallocThresholds", fn) != napi_ok) return NULL;
  return exports;
}
