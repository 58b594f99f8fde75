// azc-bind.so: preloaded into each casting receiver (LD_PRELOAD), it keeps the receiver's TCP listening sockets to
// the address the daemon serves on, named in AZC_BIND_HOST (an IPv4 or IPv6 address, 0.0.0.0 or ::). shairport-sync
// listens on every address whatever its `interface` setting, and libupnp (gmediarender) on its interface's IPv6
// address beside the IPv4 one, and neither has an option to choose; the unit cannot choose addresses either.
//
// Only TCP binds change; UDP is left alone (SSDP must receive multicast, which a socket bound to a unicast address
// does not; AirPlay's UDP ports bind to the address the sender connected to). Loopback binds are left alone. For a
// TCP bind to any other address:
//   - a family the daemon serves: a wildcard becomes the daemon's address (unchanged when that is a wildcard too), and
//     any other address of that family is left alone when the daemon serves the wildcard, else made loopback;
//   - a family it does not serve: the bind goes to that family's loopback address, so the program still starts (libupnp
//     gives up when a bind fails) and nothing outside the machine reaches the socket; an IPv6 socket that also takes
//     IPv4 (IPV6_V6ONLY off) binding the IPv6 wildcard is bound to the IPv4 address as mapped (::ffff:a.b.c.d), so it
//     keeps taking IPv4 where the daemon serves it.
// Without AZC_BIND_HOST, or with one that is not an address, every bind is left as it was.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

static int is_stream(int fd) {
  int type = 0;
  socklen_t length = sizeof type;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == SOCK_STREAM;
}

static int v6_only(int fd) {
  int only = 0;
  socklen_t length = sizeof only;
  return getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, &length) == 0 && only;
}

// The daemon's address: what family it is and whether it is that family's wildcard.
struct served {
  int family;
  int wildcard;
  struct in_addr v4;
  struct in6_addr v6;
};

static int served_address(struct served *served) {
  const char *host = getenv("AZC_BIND_HOST");
  if (!host) return 0;
  memset(served, 0, sizeof *served);
  if (inet_pton(AF_INET, host, &served->v4) == 1) {
    served->family = AF_INET;
    served->wildcard = served->v4.s_addr == htonl(INADDR_ANY);
    return 1;
  }
  if (inet_pton(AF_INET6, host, &served->v6) == 1) {
    served->family = AF_INET6;
    served->wildcard = IN6_IS_ADDR_UNSPECIFIED(&served->v6);
    return 1;
  }
  return 0;
}

int bind(int fd, const struct sockaddr *address, socklen_t length) {
  static bind_fn real_bind;
  if (!real_bind) real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
  struct served served;
  if (!address || !served_address(&served) || !is_stream(fd)) return real_bind(fd, address, length);

  if (address->sa_family == AF_INET && length >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in changed;
    memcpy(&changed, address, sizeof changed);
    if ((ntohl(changed.sin_addr.s_addr) >> 24) == 127) return real_bind(fd, address, length);
    if (served.family == AF_INET && served.wildcard) return real_bind(fd, address, length);
    if (served.family == AF_INET && changed.sin_addr.s_addr == htonl(INADDR_ANY)) changed.sin_addr = served.v4;
    else if (served.family == AF_INET6 && served.wildcard && IN6_IS_ADDR_UNSPECIFIED(&served.v6))
      return real_bind(fd, address, length); // `::` serves IPv4 too
    else if (served.family != AF_INET || changed.sin_addr.s_addr != served.v4.s_addr)
      changed.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return real_bind(fd, (const struct sockaddr *)&changed, sizeof changed);
  }

  if (address->sa_family == AF_INET6 && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 changed;
    memcpy(&changed, address, sizeof changed);
    if (IN6_IS_ADDR_LOOPBACK(&changed.sin6_addr)) return real_bind(fd, address, length);
    if (served.family == AF_INET6 && served.wildcard) return real_bind(fd, address, length);
    int wildcard = IN6_IS_ADDR_UNSPECIFIED(&changed.sin6_addr);
    if (served.family == AF_INET6) {
      if (wildcard) changed.sin6_addr = served.v6;
      else if (memcmp(&changed.sin6_addr, &served.v6, sizeof served.v6) != 0) changed.sin6_addr = in6addr_loopback;
    } else if (wildcard && !v6_only(fd)) {
      // IPv4 through an IPv6 socket: the daemon's IPv4 address (or any), as mapped.
      memset(&changed.sin6_addr, 0, sizeof changed.sin6_addr);
      changed.sin6_addr.s6_addr[10] = 0xff;
      changed.sin6_addr.s6_addr[11] = 0xff;
      memcpy(&changed.sin6_addr.s6_addr[12], &served.v4, 4);
    } else {
      changed.sin6_addr = in6addr_loopback;
    }
    changed.sin6_scope_id = 0;
    return real_bind(fd, (const struct sockaddr *)&changed, sizeof changed);
  }
  return real_bind(fd, address, length);
}
