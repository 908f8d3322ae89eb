mod cli;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = cli::parse();
    std::process::exit(cli::run(cli));
}
