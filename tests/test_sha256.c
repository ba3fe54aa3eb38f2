/*
 * test_sha256.c -- kbench's SHA-256 against the test vectors of FIPS 180-4's
 * examples, its incremental form fed in uneven pieces, and the digest of a
 * file against the digest of the same bytes in memory.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

static void assert_digest(const char *msg, const char *want)
{
    char hex[65];
    kbc_sha256_hex(msg, strlen(msg), hex);
    cr_assert_str_eq(hex, want, "SHA-256 of \"%s\"", msg);
}

Test(sha256, abc)
{
    assert_digest("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(sha256, empty_string)
{
    assert_digest("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(sha256, two_block_message)
{
    /* 448 bits: the padding no longer fits the first block. */
    assert_digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, binary_digest_matches_hex)
{
    unsigned char d[32];
    kbc_sha256("abc", 3, d);
    cr_assert_eq(d[0], 0xba);
    cr_assert_eq(d[1], 0x78);
    cr_assert_eq(d[31], 0xad);
}

Test(sha256, million_a_in_odd_chunks)
{
    static const size_t sizes[] = {1, 7, 63, 64, 65, 127, 1000, 4099};
    char a[4099];
    memset(a, 'a', sizeof a);
    kbc_sha256_ctx c;
    kbc_sha256_init(&c);
    size_t left = 1000000;
    for (size_t i = 0; left > 0; i++) {
        size_t n = sizes[i % (sizeof sizes / sizeof sizes[0])];
        if (n > left)
            n = left;
        kbc_sha256_update(&c, a, n);
        left -= n;
    }
    unsigned char d[32];
    char hex[65];
    kbc_sha256_final(&c, d);
    kbc_sha256_to_hex(d, hex);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, byte_at_a_time_equals_one_call_at_every_length)
{
    /* Every length around the block and padding boundaries (55, 56, 64). */
    unsigned char msg[200];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (unsigned char)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof msg; len++) {
        unsigned char whole[32], bytes[32];
        kbc_sha256(msg, len, whole);
        kbc_sha256_ctx c;
        kbc_sha256_init(&c);
        for (size_t i = 0; i < len; i++)
            kbc_sha256_update(&c, msg + i, 1);
        kbc_sha256_final(&c, bytes);
        cr_assert_eq(memcmp(whole, bytes, 32), 0, "length %zu", len);
    }
}

Test(sha256, file_digest_equals_digest_of_its_bytes)
{
    /* Larger than the chunk the file is read in, and not a multiple of it. */
    size_t n = 3 * 16384 + 123;
    unsigned char *bytes = malloc(n);
    cr_assert_not_null(bytes);
    for (size_t i = 0; i < n; i++)
        bytes[i] = (unsigned char)(i * 131 + (i >> 8));
    char path[] = "/tmp/kbench-sha256-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, n), (ssize_t)n);
    close(fd);

    char want[65], got[65], why[300] = "";
    kbc_sha256_hex(bytes, n, want);
    int rc = kbc_sha256_file(path, got, why, sizeof why);
    unlink(path);
    free(bytes);
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_str_eq(got, want);
}

Test(sha256, missing_file_says_which)
{
    const char *path = "/tmp/kbench-sha256-no-such-dir/none.bin";
    char hex[65] = "x", why[300] = "";
    cr_assert_eq(kbc_sha256_file(path, hex, why, sizeof why), -1);
    cr_assert_str_eq(why, "cannot read /tmp/kbench-sha256-no-such-dir/none.bin: "
                          "No such file or directory");
    cr_assert_str_empty(hex);
}
