/*
 * test_nvml_list.c -- the GPUs NVML lists, read from the fake libnvidia-ml
 * of tests/fixtures/nvml (chosen through $KBENCH_NVML; its device order by
 * index is the reverse of its bus-id order), and PCI bus ids compared.
 * Criterion runs each test in its own process, so a setenv() here touches
 * no other test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

static void assert_has(const char *s, const char *piece)
{
    cr_assert(strstr(s, piece) != NULL, "expected \"%s\" in: %s", piece, s);
}

/* Lists the fake's gpus devices into out[0..max). */
static int list_fake(const char *gpus, kbc_gpu_id *out, int max)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_GPUS", gpus, 1);
    int n = kbc_nvml_list(out, max, why, sizeof why);
    cr_assert_geq(n, 0, "kbc_nvml_list failed: %s", why);
    return n;
}

/* ---- the list -------------------------------------------------------------- */

Test(nvml_list, four_gpus_sorted_by_bus_id)
{
    kbc_gpu_id g[8];
    cr_assert_eq(list_fake("4", g, 8), 4);
    static const char *const bus[] = {"00000000:10:00.0", "00000000:11:00.0",
                                      "00000000:12:00.0", "00000000:13:00.0"};
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(g[i].pci_bus_id, bus[i], "entry %d", i);
        cr_assert_eq(g[i].index, 3u - (unsigned)i, "entry %d keeps NVML's index", i);
    }
}

Test(nvml_list, uuids_are_distinct_and_follow_the_index)
{
    kbc_gpu_id g[8];
    cr_assert_eq(list_fake("4", g, 8), 4);
    for (int i = 0; i < 4; i++) {
        char want[96];
        snprintf(want, sizeof want, "GPU-fake-0000-%u", g[i].index);
        cr_assert_str_eq(g[i].uuid, want);
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(g[i].uuid, g[j].uuid);
    }
}

Test(nvml_list, names_and_memory)
{
    kbc_gpu_id g[8];
    setenv("FAKE_NVML_NAME", "Fake Card", 1);
    cr_assert_eq(list_fake("2", g, 8), 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_str_eq(g[i].name, "Fake Card");
        cr_assert_eq(g[i].mem_bytes, 80ULL << 30);
    }
}

Test(nvml_list, mixed_names_the_last_index_h200)
{
    kbc_gpu_id g[8];
    setenv("FAKE_NVML_MIXED", "1", 1);
    cr_assert_eq(list_fake("3", g, 8), 3);
    /* Index 2, the last, has the lowest bus id, so it comes first. */
    cr_assert_eq(g[0].index, 2);
    cr_assert_str_eq(g[0].name, "Fake H200");
    cr_assert_str_eq(g[1].name, "Fake H100");
    cr_assert_str_eq(g[2].name, "Fake H100");
}

Test(nvml_list, max_keeps_the_lowest_bus_ids)
{
    kbc_gpu_id g[2];
    cr_assert_eq(list_fake("4", g, 2), 2);
    cr_assert_str_eq(g[0].pci_bus_id, "00000000:10:00.0");
    cr_assert_str_eq(g[1].pci_bus_id, "00000000:11:00.0");
}

Test(nvml_list, device_without_bus_id_is_left_out)
{
    kbc_gpu_id g[8];
    setenv("FAKE_NVML_FAIL", "pci", 1);
    cr_assert_eq(list_fake("3", g, 8), 2);
    for (int i = 0; i < 2; i++)
        cr_assert_neq(g[i].index, 0);
}

Test(nvml_list, off_says_so)
{
    kbc_gpu_id g[4];
    char why[300] = "";
    setenv("KBENCH_NVML", "off", 1);
    cr_assert_eq(kbc_nvml_list(g, 4, why, sizeof why), -1);
    cr_assert_str_eq(why, "KBENCH_NVML is off");
}

Test(nvml_list, missing_library_names_it)
{
    kbc_gpu_id g[4];
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FIXTURE_DIR "/nvml/no-such-libnvidia-ml.so", 1);
    cr_assert_eq(kbc_nvml_list(g, 4, why, sizeof why), -1);
    assert_has(why, "no-such-libnvidia-ml.so could not be loaded");
}

Test(nvml_list, init_failure_says_so)
{
    kbc_gpu_id g[4];
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_FAIL", "init", 1);
    cr_assert_eq(kbc_nvml_list(g, 4, why, sizeof why), -1);
    assert_has(why, "nvmlInit_v2 failed");
}

Test(nvml_list, count_failure_says_so)
{
    kbc_gpu_id g[4];
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_FAIL", "count", 1);
    cr_assert_eq(kbc_nvml_list(g, 4, why, sizeof why), -1);
    assert_has(why, "nvmlDeviceGetCount_v2 failed: Not Supported");
}

/* ---- PCI bus ids compared --------------------------------------------------- */

Test(pci_bus_id, cuda_and_nvml_forms_are_the_same)
{
    cr_assert_eq(kbc_pci_bus_id_same("0000:19:00.0", "00000000:19:00.0"), 1);
}

Test(pci_bus_id, case_is_ignored)
{
    cr_assert_eq(kbc_pci_bus_id_same("0000:1a:00.0", "00000000:1A:00.0"), 1);
}

Test(pci_bus_id, missing_domain_is_zero)
{
    cr_assert_eq(kbc_pci_bus_id_same("19:00.0", "00000000:19:00.0"), 1);
    cr_assert_eq(kbc_pci_bus_id_same("19:00.0", "0001:19:00.0"), 0);
}

Test(pci_bus_id, each_field_counts)
{
    const char *base = "0000:19:00.0";
    cr_assert_eq(kbc_pci_bus_id_same(base, "0001:19:00.0"), 0, "domain");
    cr_assert_eq(kbc_pci_bus_id_same(base, "0000:1a:00.0"), 0, "bus");
    cr_assert_eq(kbc_pci_bus_id_same(base, "0000:19:01.0"), 0, "device");
    cr_assert_eq(kbc_pci_bus_id_same(base, "0000:19:00.1"), 0, "function");
}

Test(pci_bus_id, malformed_ids_equal_nothing)
{
    cr_assert_eq(kbc_pci_bus_id_same("", ""), 0);
    cr_assert_eq(kbc_pci_bus_id_same(NULL, NULL), 0);
    cr_assert_eq(kbc_pci_bus_id_same("0000:19:00", "0000:19:00"), 0, "no function");
    cr_assert_eq(kbc_pci_bus_id_same("0000:19:00.0 ", "0000:19:00.0"), 0, "trailing space");
    cr_assert_eq(kbc_pci_bus_id_same("000000000:19:00.0", "0000:19:00.0"), 0,
                 "domain wider than 32 bits");
    cr_assert_eq(kbc_pci_bus_id_same("0000:19:00.0", "GPU-0000:19:00.0"), 0);
}
