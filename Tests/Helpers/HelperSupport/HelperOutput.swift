import Foundation

/// Prints `line` on standard output: the helper's answer to the test that started it.
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints `message` on standard error, after the helper's name, and exits with status 1.
public func fail(_ message: String) -> Never {
    let name = URL(fileURLWithPath: CommandLine.arguments.first ?? "helper").lastPathComponent
    FileHandle.standardError.write(Data((name + ": " + message + "\n").utf8))
    exit(1)
}
