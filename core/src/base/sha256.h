/*
 * sha256.h -- SHA-256 (FIPS 180-4), for the fingerprints kbench keeps of
 * files and records: the digest of a buffer, of a file read in chunks, and
 * an incremental form (init, update as often as needed, final) that the
 * other two are built on.
 */
#ifndef KBENCH_SHA256_H
#define KBENCH_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The running state of one digest.  Its fields are the hash's own; callers
   only pass it to the functions below. */
typedef struct kbc_sha256_ctx {
    uint32_t h[8];          /* the intermediate hash value H(i)            */
    uint64_t bytes;         /* message length so far, in bytes             */
    unsigned char buf[64];  /* the block being filled                      */
    size_t used;            /* how many bytes of buf are filled (0..63)    */
} kbc_sha256_ctx;

/* Starts a new digest in c. */
void kbc_sha256_init(kbc_sha256_ctx *c);

/* Adds n bytes at data to the message; may be called any number of times,
   with pieces of any size (n may be 0). */
void kbc_sha256_update(kbc_sha256_ctx *c, const void *data, size_t n);

/* Pads the message, writes its 32-byte digest to out, and leaves c spent
   (kbc_sha256_init starts it again). */
void kbc_sha256_final(kbc_sha256_ctx *c, unsigned char out[32]);

/* The digest of the n bytes at data. */
void kbc_sha256(const void *data, size_t n, unsigned char out[32]);

/* The digest of the n bytes at data as 64 lower-case hex digits and a NUL. */
void kbc_sha256_hex(const void *data, size_t n, char hex[65]);

/* The 32-byte digest d as 64 lower-case hex digits and a NUL. */
void kbc_sha256_to_hex(const unsigned char d[32], char hex[65]);

/* The digest of the file at path, read in chunks, as hex.  Returns 0, or -1
   with why set to one clause ("cannot read /x: No such file or directory")
   and hex left empty. */
int kbc_sha256_file(const char *path, char hex[65], char *why, size_t whyn);

#endif
