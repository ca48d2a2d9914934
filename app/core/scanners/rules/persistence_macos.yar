rule persistence_macos
{
    meta:
        id = "persistence-macos"
        description = "Survives reboots on macOS: LaunchAgents/LaunchDaemons plists loaded with launchctl, login items"
        severity = "high"
    strings:
        $agents = /Library\/LaunchAgents\/[\w.\-]+\.plist/
        $daemons = /Library\/LaunchDaemons\/[\w.\-]+\.plist/
        $launchctl = /launchctl\s+(load|bootstrap|submit)\b/
        $run_at_load = "<key>RunAtLoad</key>"
        $login_item = /osascript\s+-e\s+['"][^\n]{0,160}make\s+(new\s+)?login\s+item/ nocase
    condition:
        (($agents or $daemons) and ($launchctl or $run_at_load)) or $login_item
}
