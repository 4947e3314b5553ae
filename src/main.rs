use std::process::ExitCode;

fn main() -> ExitCode {
    // The YAML parser catches the rare panics of libyaml-safer and reports
    // them as syntax errors naming the file; the program keeps them off
    // stderr. Every other panic is printed as usual.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !hydrate::yaml::in_guarded_parse() {
            default(info);
        }
    }));
    hydrate::cli::run()
}
