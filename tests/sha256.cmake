# SHA-256 (core/src/base/sha256.c): the FIPS 180-4 test vectors, the incremental
# form, and the digest of a file.
kbench_test(test_sha256 SOURCES test_sha256.c)
