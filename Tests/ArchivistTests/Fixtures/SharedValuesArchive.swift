import Foundation

/// An NSKeyedArchiver archive, as Foundation lays one out, whose objects share: a `Task`
/// (`@1`) whose `done` and `seen` fields both refer to the one `true` stored at `@2`, whose
/// `title` and `subtitle` both refer to the string at `@4`, whose `subtasks` array (`@5`)
/// holds the same child `Task` (`@7`) twice, and whose child refers back to it (a cycle).
enum SharedValuesArchive {
    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>$archiver</key><string>NSKeyedArchiver</string>
        \t<key>$version</key><integer>100000</integer>
        \t<key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>1</integer></dict></dict>
        \t<key>$objects</key>
        \t<array>
        \t\t<string>$null</string>
        \t\t<dict>
        \t\t\t<key>$class</key><dict><key>CF$UID</key><integer>3</integer></dict>
        \t\t\t<key>done</key><dict><key>CF$UID</key><integer>2</integer></dict>
        \t\t\t<key>seen</key><dict><key>CF$UID</key><integer>2</integer></dict>
        \t\t\t<key>title</key><dict><key>CF$UID</key><integer>4</integer></dict>
        \t\t\t<key>subtitle</key><dict><key>CF$UID</key><integer>4</integer></dict>
        \t\t\t<key>subtasks</key><dict><key>CF$UID</key><integer>5</integer></dict>
        \t\t</dict>
        \t\t<true/>
        \t\t<dict>
        \t\t\t<key>$classname</key><string>Task</string>
        \t\t\t<key>$classes</key><array><string>Task</string><string>NSObject</string></array>
        \t\t</dict>
        \t\t<string>Write the guide</string>
        \t\t<dict>
        \t\t\t<key>$class</key><dict><key>CF$UID</key><integer>6</integer></dict>
        \t\t\t<key>NS.objects</key>
        \t\t\t<array>
        \t\t\t\t<dict><key>CF$UID</key><integer>7</integer></dict>
        \t\t\t\t<dict><key>CF$UID</key><integer>7</integer></dict>
        \t\t\t</array>
        \t\t</dict>
        \t\t<dict>
        \t\t\t<key>$classname</key><string>NSArray</string>
        \t\t\t<key>$classes</key><array><string>NSArray</string><string>NSObject</string></array>
        \t\t</dict>
        \t\t<dict>
        \t\t\t<key>$class</key><dict><key>CF$UID</key><integer>3</integer></dict>
        \t\t\t<key>done</key><dict><key>CF$UID</key><integer>2</integer></dict>
        \t\t\t<key>parent</key><dict><key>CF$UID</key><integer>1</integer></dict>
        \t\t\t<key>title</key><dict><key>CF$UID</key><integer>4</integer></dict>
        \t\t</dict>
        \t</array>
        </dict>
        </plist>

        """

    /// Writes the archive into `folder` and returns its path.
    static func write(in folder: ScratchFolder) throws -> URL {
        let file = folder.file("tasks.plist")
        try Data(xml.utf8).write(to: file)
        return file
    }
}
