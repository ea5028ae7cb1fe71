// A Rust program for wasm32-wasi: arguments, the environment, a file in a
// preopen, stdin, and an exit code.
use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("args: {:?}", args);
    println!("GREETING: {:?}", std::env::var("GREETING").ok());
    match std::fs::read_to_string("data/in.txt") {
        Ok(s) => print!("file: {}", s),
        Err(e) => println!("file error: {}", e.kind()),
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    println!("stdin: {} bytes", input.len());
    eprintln!("done");
    std::process::exit(args.len() as i32);
}
