package org.holdfast.client.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StartupWarmerTest {
    @Test
    void warmsOnlyForCommandsThatTalkToAServer() throws Exception {
        assertThat(StartupWarmer.start(new String[0])).isNull();
        assertThat(StartupWarmer.start(new String[] {"--help"})).isNull();
        assertThat(StartupWarmer.start(new String[] {"--version"})).isNull();
        Thread t = StartupWarmer.start(new String[] {"restore", "--help"});
        assertThat(t).isNotNull();
        assertThat(t.isDaemon()).as("never keeps the JVM alive").isTrue();
        t.join(60_000);
        assertThat(t.isAlive()).isFalse();
    }

    @Test
    void everyListedClassExists_soARenameInALibraryIsNoticed() throws Exception {
        for (String name : StartupWarmer.classes()) {
            assertThat(Class.forName(name, false, StartupWarmer.class.getClassLoader())).as(name).isNotNull();
        }
        StartupWarmer.warm(); // never throws
    }
}
