//! Command line entry: parses arguments and hands off to the library.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        let Some(name) = args.get(1) else {
            eprintln!("usage: toolgate serve docs|deploy|fs <root>");
            return std::process::ExitCode::from(2);
        };
        let rt = match tokio::runtime::Runtime::new() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("toolgate: cannot start runtime: {e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        return match rt.block_on(toolgate::servers::serve(name, &args[2..])) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolgate serve {name}: {e:#}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    println!("toolgate");
    std::process::ExitCode::SUCCESS
}
