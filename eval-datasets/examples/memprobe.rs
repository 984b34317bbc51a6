fn hwm() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("VmHWM") || l.starts_with("VmRSS"))
        .collect::<Vec<_>>()
        .join(" ")
}
fn main() {
    let p = std::env::args().nth(1).unwrap();
    println!("start {}", hwm());
    let ds = eval_datasets::Dataset::load(&p).unwrap();
    println!("loaded {} {}", ds.samples.len(), hwm());
    let names = ds.test_names();
    println!("names {} {}", names.len(), hwm());
    println!(
        "sizeof Sample {}",
        std::mem::size_of::<eval_datasets::Sample>()
    );
}
