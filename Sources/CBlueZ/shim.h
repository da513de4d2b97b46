#include <sys/socket.h>
#include <time.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/* recvmmsg(2) is a _GNU_SOURCE declaration, which Swift's Glibc module leaves out: the same
   function (glibc's `recvmmsg` symbol) and the same layout as `struct mmsghdr`, under names of
   our own so they cannot clash with glibc's where a header does declare them. */
struct roomcast_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

extern int roomcast_recvmmsg(int fd, struct roomcast_mmsghdr *vmessages, unsigned int vlen, int flags,
                             struct timespec *timeout) __asm__("recvmmsg");

/* The first control message of `level` and `type` in `msg`, read as two C longs (a timeval or a
   timespec, as the kernel gives them to this ABI) with CMSG_FIRSTHDR/CMSG_NXTHDR, which Swift
   cannot call (they are macros). Returns 1 and sets *seconds and *fraction when found, else 0. */
static inline int roomcast_cmsg_time(struct msghdr *msg, int level, int type, long *seconds, long *fraction) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != level || c->cmsg_type != type) continue;
        if (c->cmsg_len < CMSG_LEN(2 * sizeof(long))) return 0;
        const long *pair = (const long *)CMSG_DATA(c);
        *seconds = pair[0];
        *fraction = pair[1];
        return 1;
    }
    return 0;
}
