import Testing
@testable import Shared
@testable import RoomcastAgent
@testable import RoomcastConfig
@testable import RoomcastYAML

@Suite struct YAMLReaderTests {
    func parse(_ text: String) throws(ConfigProblem) -> ConfigNode? {
        try YAMLReader().parse(text)
    }

    @Test func keepsKeyOrderStylesAndPositions() throws {
        let root = try #require(try parse("b: 1\na: \"007\"\nc:\n  - x\n  - ~\n"))
        guard case .mapping(let entries) = root.kind else {
            Issue.record("not a mapping")
            return
        }
        #expect(entries.map(\.key) == ["b", "a", "c"])
        #expect(entries[0].value.kind == .scalar("1", .plain))
        #expect(entries[1].value.kind == .scalar("007", .quoted))
        #expect(entries[1].keyLocation == .position(line: 2, column: 1))
        #expect(entries[1].value.location == .position(line: 2, column: 4))
        guard case .sequence(let items) = entries[2].value.kind else {
            Issue.record("not a sequence")
            return
        }
        #expect(items.map(\.kind) == [.scalar("x", .plain), .null])
        #expect(items[1].location == .position(line: 5, column: 5))
    }

    @Test(arguments: ["", "~", "null", "Null", "NULL"])
    func plainNullForms(_ text: String) throws {
        let root = try #require(try parse("k: \(text)\n"))
        #expect(root["k"]?.kind == .null)
    }

    @Test func quotedBlockAndTaggedScalarsAreStrings() throws {
        let root = try #require(try parse("a: 'null'\nb: !!str 12\nc: |\n  text\n"))
        #expect(root["a"]?.kind == .scalar("null", .quoted))
        #expect(root["b"]?.kind == .scalar("12", .quoted))
        #expect(root["c"]?.kind == .scalar("text\n", .quoted))
    }

    @Test func aliasesWithinLimitsExpand() throws {
        let root = try #require(try parse("base: &b {x: 1}\ncopy: *b\n"))
        #expect(root["copy"]?["x"]?.kind == .scalar("1", .plain))
        #expect(root["copy"]?.location == .position(line: 2, column: 7))
    }

    @Test(arguments: [
        ("a: [1, 2\n", "invalid YAML: did not find expected ',' or ']' while parsing a flow sequence", 2),
        ("a: 1\n---\nb: 2\n", "only one YAML document is allowed (found a second '---')", 2),
        ("a: *nope\n", "a value starting with '*' is read as a YAML alias of no anchor: quote the value (value not shown)", 1),
        ("a: &lonely\nb: 1\n", "a value starting with '&' is read as a YAML anchor with no value after it: quote the value (value not shown)", 1),
        ("? [a]\n: 1\n", "mapping keys must be plain text, found a list", 1),
        ("base: &b {x: 1}\nc:\n  <<: *b\n", "merge keys ('<<') are not supported; repeat the values or use an alias for the whole value", 3),
    ])
    func syntaxProblemsHaveALine(_ text: String, _ message: String, _ line: Int) throws {
        #expect(throws: ConfigProblem.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.location?.line == line)
        }
    }

    /// A quote left open is found only at the end of the file: where it began is named too. A
    /// control character is placed where it is, and named (libyaml marks no position for it:
    /// it read as line 1, column 1).
    @Test func anErrorIsPlacedWhereTheUserCanFindIt() throws {
        do {
            _ = try parse("node: a\nmqtt:\n  password: \"hunter2\n  broker: mqtt://h\n")
            Issue.record("parsed")
        } catch {
            #expect(error.message.contains("(it began at line 3, column 13)"), "\(error.message)")
        }
        do {
            _ = try parse("a: 1\nb: x\u{7}y\n")
            Issue.record("parsed")
        } catch {
            #expect(error.location == .position(line: 2, column: 5) && error.message.contains("U+0007"), "\(error.message) \(String(describing: error.location))")
        }
    }

    /// Too deep is said where: the path of the value that went past the limit.
    @Test func nestingTooDeepNamesItsPath() {
        #expect { try YAMLReader(limits: .init(maxDepth: 3)).read("mqtt:\n  tls: {a: {b: 1}}\n") } throws: { error in
            (error as? ConfigProblem)?.path == "mqtt.tls.a"
        }
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: ConfigProblem.self) { try parse(deep) }
        // The error says where: under the top mapping, the 64th list is the 65th level; it opens
        // at column 4 + 63 of the second line.
        let placed = "a: 1\nb: " + deep
        #expect { try parse(placed) } throws: { ($0 as? ConfigProblem)?.location == .position(line: 2, column: 67) }
        let ok = String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        #expect((try? parse(ok)) != nil)
    }

    @Test func nodeCountIsLimited() {
        let reader = YAMLReader(limits: .init(maxNodes: 100))
        let list = "[" + Array(repeating: "1", count: 200).joined(separator: ",") + "]"
        #expect(throws: ConfigProblem.self) { try reader.parse(list) }
        // The error names the line of the value past the limit (the 100th, after the list itself).
        let lines = "- 0\n" + (1..<200).map { "- \($0)\n" }.joined()
        #expect { try reader.parse(lines) } throws: { ($0 as? ConfigProblem)?.location == .position(line: 100, column: 3) }
    }

    @Test func topLevelMustBeAMapping() {
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(AgentConfig.self, yaml: "- a\n- b\n") }
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: "- a\n")
        } catch {
            #expect(error.messages == ["the top level must be a mapping of keys to values, found a list"])
        }
    }
}
