//! Chip files for people: a template that parses, every missing key at once, defaults and
//! derived bandwidths shown, unit slips warned about, whole floats taken for integer keys.

use super::common::{elk, elk_ok, reviewers_mesh, scratch, SMALL_MODEL};

fn write(name: &str, text: &str) -> String {
    let f = scratch("chip-files").join(name);
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(elk_ok(args).stdout).unwrap()
}

#[test]
fn templates_are_commented_valid_chips() {
    for topology in ["all-to-all", "mesh", "torus"] {
        let text = stdout(&["chips", "template", "--topology", topology]);
        assert!(text.starts_with("# A chip for elk-opt"), "{text}");
        assert!(
            text.contains(&format!("topology = \"{topology}\"")),
            "{text}"
        );
        let f = write(&format!("template-{topology}.toml"), &text);
        let out = elk_ok(&["chips", "show", &f]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The mesh template has sn40l-like's links and controllers, which distribute HBM data
        // at 712 GB/s, below its 2 TB/s HBM: the one warning it gets says so.
        let expected = match topology {
            // What to raise, and to what (the warning is `chips show`'s own: no pointer to it).
            "mesh" => "warning: my-chip: the NoC distributes HBM data at most at 712.348 GB/s (B_NoC,dist), 36 % of the HBM's 2.000 TB/s: every load is NoC-bound, so the HBM's bandwidth cannot be used; to make the NoC no longer the bound of HBM loads, raise noc.link_bytes_per_s from 1.024e11 to ≥ 2.875e11 (287.500 GB/s), or both: hbm.controllers = 16 with noc.link_bytes_per_s ≥ 2.157e11 (215.700 GB/s) (more controllers alone cannot: 128, one per edge core, reach 1.311 TB/s)\n",
            _ => "",
        };
        assert_eq!(stderr, expected);
        let shown = String::from_utf8(out.stdout).unwrap();
        assert!(
            !shown.contains("(default)"),
            "the template writes every key: {shown}"
        );
    }
    assert_eq!(
        stdout(&["chips", "template"]),
        stdout(&["chips", "template", "--topology", "all-to-all"])
    );
}

#[test]
fn every_missing_key_is_one_error_naming_the_file() {
    let f = write(
        "partial.toml",
        "name = \"mine\"\ncores = 2048\nsram_bytes_per_core = 1048576\nclock_hz = 1.5e9\n\
         [hbm]\nbandwidth_bytes_per_s = 8e12\ncontrollers = 8\nplacement = \"edges\"\n",
    );
    let out = elk(&["chips", "show", &f]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "error: {f}: missing keys: table [noc] with topology, injection_bytes_per_s_per_core, \
             link_bytes_per_s, hop_latency_cycles, table [cost_model] with kind (every key: \
             docs/chips.md or `elk-opt chips template`)\n"
        )
    );
    assert!(!err.contains("line 1"), "{err}");
}

#[test]
fn show_marks_defaults_and_prints_the_bandwidths_that_decide() {
    let pod = stdout(&["chips", "show", "ipu-pod4"]);
    assert!(
        pod.contains(
            "# inter-chip penalty: communication × 1.25 (cores 5888 > cores_per_chip 1472)"
        ),
        "{pod}"
    );
    assert!(
        pod.contains("\ncores_per_chip = 1472\ninter_chip_comm_factor = 1.25\n"),
        "{pod}"
    );
    assert!(stdout(&["chips", "show", "ipu-mk2"])
        .contains("# inter-chip penalty: none (cores 1472 ≤ cores_per_chip 1472)"));
    assert!(pod.contains(
        "# HBM distribution over the NoC (B_NoC,dist): 34.772 TB/s = cores × injection = 5888 × 5.906 GB/s (all-to-all)"
    ), "{pod}");
    // The reviewer's chip: 2,048 cores on a 64 x 32 mesh, 8 controllers, 64 GB/s links, 8 TB/s
    // HBM; an IPU clone without the penalty keys.
    let mesh = reviewers_mesh()
        .replace("link_bytes_per_s = 102.4e9", "link_bytes_per_s = 64.0e9")
        .replace("description = ", "# description = ");
    let shown = stdout(&["chips", "show", &write("mesh.toml", &mesh)]);
    assert!(
        shown.contains(
            "# HBM distribution over the NoC (B_NoC,dist): 409.600 GB/s = controllers × link rate / hottest link's share = 8 × 64.000 GB/s / 1.250 (the controllers' traffic to every core on the 64×32 Mesh's routes), below cores × injection = 2048 × 102.400 GB/s = 209.715 TB/s; below the HBM's 8.000 TB/s: HBM loads are NoC-bound"
        ),
        "{shown}"
    );
    // The line under it says which keys to raise, and to what.
    assert!(
        shown.contains("\n# to make the NoC no longer the bound of HBM loads, raise noc.link_bytes_per_s from 6.4e10 to ≥ 1.25e12 (1.250 TB/s), or both: hbm.controllers = 16 with noc.link_bytes_per_s ≥ 9.375e11 (937.500 GB/s) (more controllers alone cannot: 188, one per edge core, reach 752.000 GB/s)\n"),
        "{shown}"
    );
    // `instance` on that chip file warns too, and points to a `chips show` that works: the
    // file the user gave, not the chip's name (ux-2 #12).
    let file = write("mesh-for-instance.toml", &mesh);
    let inst = scratch("chip-files").join("mesh-inst.json");
    let out = elk_ok(
        &[
            &["instance"][..],
            &SMALL_MODEL,
            &["--chip", &file, "-o", inst.to_str().unwrap()],
        ]
        .concat(),
    );
    let warning = String::from_utf8(out.stderr).unwrap();
    assert!(
        warning
            .lines()
            .next()
            .is_some_and(|w| w.ends_with(&format!("(`elk-opt chips show {file}`)"))),
        "{warning}"
    );
    elk_ok(&["chips", "show", &file]);
    assert!(
        shown.contains("\ndescription = \"\"  # (default)\n"),
        "{shown}"
    );
    let clone = include_str!("../../model/chips/ipu-mk2.toml")
        .replace("cores = 1472", "cores = 2048")
        .replace("cores_per_chip = 1472", "")
        .replace("inter_chip_comm_factor = 1.25", "");
    let shown = stdout(&["chips", "show", &write("clone.toml", &clone)]);
    assert!(
        shown.contains(
            "\ncores_per_chip = 1472  # (default)\ninter_chip_comm_factor = 1.25  # (default)\n"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("communication × 1.25 (cores 2048 > cores_per_chip 1472)"),
        "{shown}"
    );
    // What show prints is a chip file again.
    let again = stdout(&["chips", "show", &write("again.toml", &shown)]);
    assert!(again.contains("cores = 2048"), "{again}");
}

#[test]
fn unit_slips_warn_and_whole_floats_are_integers() {
    let mk2 = include_str!("../../model/chips/ipu-mk2.toml");
    let slip = mk2.replace("clock_hz = 1.325e9", "clock_hz = 1.5").replace(
        "bandwidth_bytes_per_s = 4.0e12",
        "bandwidth_bytes_per_s = 8",
    );
    let f = write("slip.toml", &slip);
    let out = elk(&["chips", "show", &f]);
    assert_eq!(out.status.code(), Some(0), "a warning, not an error");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "warning: {f}: key 'clock_hz' = 1.5 is below 1 MHz: is the unit right? (1.5 GHz is 1.5e9)\n\
             warning: {f}: key 'hbm.bandwidth_bytes_per_s' = 8 is below 1 GB/s: is the unit right? (8 TB/s is 8.0e12)\n"
        )
    );
    // Every --chip warns too.
    let out = elk(&[
        "plans",
        "--model",
        "bert-base",
        "--num-layers",
        "1",
        "--chip",
        &f,
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let whole = mk2.replace(
        "sram_bytes_per_core = 638976",
        "sram_bytes_per_core = 1.0e6",
    );
    let shown = stdout(&["chips", "show", &write("whole.toml", &whole)]);
    assert!(
        shown.contains("\nsram_bytes_per_core = 1000000\n"),
        "{shown}"
    );
    let half = mk2.replace("cores = 1472", "cores = 1.5e0");
    let f = write("half.toml", &half);
    let out = elk(&["chips", "show", &f]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: {f}: line 4: key 'cores': 1.5 is not a whole number (an integer key: 1.0e6 is fine when whole)\n"
        )
    );
}
