// azc-confine: runs a program under a Landlock ruleset that lets it reach only the folders it is given.
//
//   azc-confine [--read DIR]... [--exec DIR]... [--write DIR]... -- PROGRAM [ARGS...]
//
// --read allows reading files and listing folders beneath DIR, --exec also running programs from there, --write every
// file-system right beneath DIR (creating, removing, truncating files, FIFOs and sockets, device ioctls). A DIR may
// also be a single file (then only the rights a file can have apply). Everything else on the file system is refused
// by the kernel when the program opens it, whatever symlinks the path goes through. Network access is not affected.
//
// Where the kernel has no Landlock (ENOSYS, EOPNOTSUPP) or a seccomp filter refuses it (EPERM), one line on stderr
// says so and the program runs unconfined. Any other failure exits with 126 and a message; a program that cannot be
// run exits with 127, as a shell's would.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
// Older kernel headers (before 5.13) have no landlock.h: the few definitions used here are the kernel's ABI.
#if defined(__has_include) && !defined(AZC_WITHOUT_LANDLOCK_H)
#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#define AZC_HAVE_LANDLOCK_H 1
#endif
#endif
#ifndef AZC_HAVE_LANDLOCK_H
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define LANDLOCK_RULE_PATH_BENEATH 1
struct landlock_path_beneath_attr {
  __u64 allowed_access;
  __s32 parent_fd;
} __attribute__((packed));
#define LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// The rights newer ABIs add, for builds against an older <linux/landlock.h>.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#define FAILED 126
#define NOT_RUN 127

// Only the file-system part of struct landlock_ruleset_attr: the kernel accepts the shorter struct, and network and
// scope restrictions are left unhandled (allowed).
struct fs_ruleset_attr {
  __u64 handled_access_fs;
};

// ABI 1's thirteen rights; REFER came with ABI 2, TRUNCATE with 3, IOCTL_DEV with 5.
#define ABI1_RIGHTS ((1ULL << 13) - 1)
#define READ_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define EXEC_RIGHTS (READ_RIGHTS | LANDLOCK_ACCESS_FS_EXECUTE)
// What a rule on a file (not a folder) may grant.
#define FILE_RIGHTS                                                                                                     \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |                          \
   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

static __u64 rights_of_abi(int abi) {
  __u64 rights = ABI1_RIGHTS;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return rights;
}

static void usage(void) {
  fprintf(stderr, "azc-confine: usage: azc-confine [--read DIR]... [--exec DIR]... [--write DIR]... -- PROGRAM [ARGS...]\n");
  exit(FAILED);
}

static void run(char **program) {
  execvp(program[0], program);
  fprintf(stderr, "azc-confine: cannot run %s: %s\n", program[0], strerror(errno));
  exit(errno == ENOENT ? NOT_RUN : FAILED);
}

// Allows `rights` beneath `where`; a path that does not exist is skipped (there is nothing there to reach).
static void allow(int ruleset, const char *where, __u64 rights) {
  int fd = open(where, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return;
    fprintf(stderr, "azc-confine: cannot open %s to allow it: %s\n", where, strerror(errno));
    exit(FAILED);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    fprintf(stderr, "azc-confine: cannot stat %s: %s\n", where, strerror(errno));
    exit(FAILED);
  }
  struct landlock_path_beneath_attr rule = {
      .allowed_access = S_ISDIR(st.st_mode) ? rights : (rights & FILE_RIGHTS),
      .parent_fd = fd,
  };
  if (rule.allowed_access != 0 && syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
    fprintf(stderr, "azc-confine: cannot allow %s: %s\n", where, strerror(errno));
    exit(FAILED);
  }
  close(fd);
}

int main(int argc, char **argv) {
  int end = 1;
  while (end < argc && strcmp(argv[end], "--") != 0) {
    if (end + 1 >= argc || (strcmp(argv[end], "--read") != 0 && strcmp(argv[end], "--exec") != 0 && strcmp(argv[end], "--write") != 0)) usage();
    end += 2;
  }
  if (end + 1 >= argc) usage();
  char **program = &argv[end + 1];

  int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) {
    if (errno == ENOSYS || errno == EOPNOTSUPP || errno == EPERM) {
      fprintf(stderr, "azc-confine: Landlock is not available (%s): %s runs without file-system confinement\n", strerror(errno), program[0]);
      run(program);
    }
    fprintf(stderr, "azc-confine: cannot ask the kernel for Landlock: %s\n", strerror(errno));
    return FAILED;
  }
  __u64 handled = rights_of_abi(abi);
  struct fs_ruleset_attr attr = {.handled_access_fs = handled};
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) {
    fprintf(stderr, "azc-confine: cannot create a Landlock ruleset: %s\n", strerror(errno));
    return FAILED;
  }
  for (int i = 1; i < end; i += 2) {
    const char *kind = argv[i];
    __u64 rights = strcmp(kind, "--read") == 0 ? READ_RIGHTS : strcmp(kind, "--exec") == 0 ? EXEC_RIGHTS : handled;
    allow(ruleset, argv[i + 1], rights & handled);
  }
  // Landlock requires it of an unprivileged caller: no exec may gain privileges the ruleset did not foresee.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fprintf(stderr, "azc-confine: cannot set no_new_privs: %s\n", strerror(errno));
    return FAILED;
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    fprintf(stderr, "azc-confine: cannot restrict itself: %s\n", strerror(errno));
    return FAILED;
  }
  close(ruleset);
  run(program);
  return FAILED;
}
