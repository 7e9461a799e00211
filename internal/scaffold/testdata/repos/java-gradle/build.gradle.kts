plugins {
    kotlin("jvm") version "2.0.0"
    application
}
application {
    mainClass.set("app.MainKt")
}
