import Foundation
public import Revertible

/// An enum with payloads of every kind, diffed with no code: `Versionable` alone.
public enum Shape: Equatable, Codable, Sendable, Versionable {
    case dot
    case circle(radius: Double)
    case rect(w: Double, h: Double)
    case styled(Style)
    case polygon(points: [Point])
    case label(String?)

    /// A payload struct, itself neither `Versionable` nor an enum.
    public struct Style: Equatable, Codable, Sendable {
        public var stroke: Double
        public var fill: String?
        public init(stroke: Double, fill: String?) {
            self.stroke = stroke
            self.fill = fill
        }
    }

    /// An element of an array inside a payload.
    public struct Point: Equatable, Codable, Sendable {
        public var x: Int
        public var y: Int
        public init(x: Int, y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// A random edit: mostly inside the current case's payload, sometimes another case.
    public mutating func edit(using generator: inout some RandomNumberGenerator) {
        if Int.random(in: 0..<4, using: &generator) == 0 {
            self = [
                .dot, .circle(radius: 1), .rect(w: 1, h: 2), .styled(Style(stroke: 1, fill: nil)),
                .polygon(points: [Point(x: 0, y: 0)]), .label(nil),
            ].randomElement(using: &generator)!
            return
        }
        switch self {
        case .dot: self = .circle(radius: Double(Int.random(in: 0..<4, using: &generator)))
        case .circle(let radius): self = .circle(radius: radius + 0.5)
        case .rect(let w, let h):
            self = Bool.random(using: &generator) ? .rect(w: w + 1, h: h) : .rect(w: w, h: h * 2)
        case .styled(var style):
            if Bool.random(using: &generator) {
                style.stroke += 1
            } else {
                style.fill = style.fill == nil ? "red" : nil
            }
            self = .styled(style)
        case .polygon(var points):
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: points.append(Point(x: points.count, y: 0))
            case 1 where !points.isEmpty: points.removeLast()
            default:
                if !points.isEmpty { points[Int.random(in: 0..<points.count, using: &generator)].y += 1 }
            }
            self = .polygon(points: points)
        case .label(let text):
            // Its "héllo" in the other Unicode normalization every other time, chosen by its
            // length, drawing nothing more from the generator: the rich store's walks keep
            // their shape.
            guard let text else {
                self = .label("h\u{E9}llo")
                break
            }
            self = .label(
                Bool.random(using: &generator)
                    ? nil : text.utf8.count.isMultiple(of: 2) ? text + "!" : Self.otherForm(of: text))
        }
    }

    /// `text` with the "héllo" it starts with in the other Unicode normalization ("é" as one
    /// scalar, or "e" and a combining accent): `==` takes both as equal, their bytes differ.
    public static func otherForm(of text: String) -> String {
        let (composed, decomposed) = ("h\u{E9}llo", "he\u{301}llo")
        for (form, other) in [(composed, decomposed), (decomposed, composed)]
        where text.utf8.starts(with: form.utf8) {
            return other + String(decoding: text.utf8.dropFirst(form.utf8.count), as: UTF8.self)
        }
        return text
    }

    /// The bytes of the text it holds, which `==` compares as Unicode text.
    public var textBytes: [[UInt8]] {
        switch self {
        case .label(let text?): [Array(text.utf8)]
        case .styled(let style): style.fill.map { [Array($0.utf8)] } ?? []
        default: []
        }
    }
}

/// An enum that is only `Codable` and `Equatable`: a property of this type is still diffed by
/// payload.
public enum Tint: Equatable, Codable, Sendable {
    case none
    case rgb(r: Int, g: Int, b: Int)
    case named(String)
}
