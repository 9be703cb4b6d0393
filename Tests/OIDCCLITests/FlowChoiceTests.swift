import Testing
@testable import oidc

/// `oidc login --flow auto`: which flow the environment leads to.
@Suite("--flow auto chooses by the environment")
struct FlowChoiceTests {
    static func choice(_ environment: [String: String], browser: String? = nil, deviceEndpoint: Bool = true) -> LoginFlowKind {
        BrowserEnvironment(browserCommand: browser, environment: environment).resolve(.auto, providerHasDeviceEndpoint: deviceEndpoint)
    }

    @Test("device in an SSH session with no browser named, even with a forwarded display; browser once one is named")
    func ssh() {
        #expect(Self.choice(["SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"]) == .device)
        #expect(Self.choice(["SSH_TTY": "/dev/pts/3", "DISPLAY": "localhost:10.0"]) == .device)
        #expect(Self.choice(["SSH_TTY": "/dev/pts/3", "BROWSER": "w3m"]) == .browser)
        #expect(Self.choice(["SSH_TTY": "/dev/pts/3"], browser: "firefox") == .browser)
    }

    #if os(Linux)
    @Test("on Linux: the browser with a display (X11 or Wayland), the device flow without one")
    func display() {
        #expect(Self.choice(["DISPLAY": ":0"]) == .browser)
        #expect(Self.choice(["WAYLAND_DISPLAY": "wayland-0"]) == .browser)
        #expect(Self.choice(["DISPLAY": "", "WAYLAND_DISPLAY": " "]) == .device)
        #expect(Self.choice([:]) == .device)
    }
    #endif

    @Test("without a device authorization endpoint, auto is the browser; an explicit flow is kept as it is")
    func explicit() {
        #expect(Self.choice([:], deviceEndpoint: false) == .browser)
        let environment = BrowserEnvironment(browserCommand: nil, environment: ["DISPLAY": ":0"])
        for flow in [LoginFlowKind.browser, .device, .clientCredentials] {
            #expect(environment.resolve(flow, providerHasDeviceEndpoint: false) == flow)
        }
    }

    @Test("--no-browser: auto is the browser flow (the URL printed to open by hand), with no display, over SSH, or without a device endpoint")
    func noBrowser() {
        for environment in [[:], ["SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"], ["DISPLAY": ":0"]] {
            let chosen = BrowserEnvironment(browserCommand: nil, noBrowser: true, environment: environment)
            #expect(chosen.resolve(.auto, providerHasDeviceEndpoint: true) == .browser, "\(environment)")
            #expect(chosen.resolve(.auto, providerHasDeviceEndpoint: false) == .browser)
            #expect(chosen.resolve(.device, providerHasDeviceEndpoint: true) == .device)
        }
    }
}
