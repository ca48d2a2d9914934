rule persistence_windows
{
    meta:
        id = "persistence-windows"
        description = "Survives reboots on Windows: Run keys, scheduled tasks, Startup folder, WMI event consumers"
        severity = "high"
    strings:
        $run_key = /\\CurrentVersion\\{1,2}Run(Once)?\b/ nocase
        $schtasks = /schtasks(\.exe)?\s+\/create\b/ nocase
        $startup = /\\Start Menu\\{1,2}Programs\\{1,2}Startup/ nocase
        $wmi_filter = "__EventFilter"
        $wmi_consumer = "CommandLineEventConsumer"
        $register_task = /Register-ScheduledTask\b/ nocase
    condition:
        any of them
}
